from common import torch, done
conv = torch.nn.Conv2d(16, 32, 3, padding=1).cuda()
x = torch.randn(8, 16, 32, 32, device="cuda", requires_grad=True)
for _ in range(20):
    y = conv(x).relu().sum()
    y.backward()
done("cudnn", conv.weight.grad)
