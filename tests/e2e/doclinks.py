#!/usr/bin/env python3
"""doclinks.py - every relative link of the Markdown files under DIR resolves: the file it
names exists (relative to the linking file) and, for a link to a heading (FILE.md#anchor or
#anchor), that file has a heading whose anchor it is, as GitHub makes anchors.

usage: doclinks.py DIR   prints one line per broken link (FILE: TARGET: why); exit status 1
                         when there is one, 0 otherwise."""
import os
import re
import sys

FENCE = re.compile(r'^(```|~~~)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
LINK = re.compile(r'\]\(([^)\s]+)\)')


def prose(path):
    """The lines of path outside fenced code blocks, inline code spans blanked."""
    out, fenced = [], False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                out.append(re.sub(r'`[^`]*`', '``', line))
    return out


def anchors(path, cache={}):
    """The anchors of path's headings (GitHub's rule: lower case, punctuation but - and _
    dropped, spaces to -, -1, -2 for repeats) and of its <a name|id="..."> tags."""
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding='utf-8') as f:
            text = f.read()
        fenced = False
        for line in text.splitlines():
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if not m:
                continue
            a = re.sub(r'[^\w\- ]', '', m.group(2).strip().lower()).replace(' ', '-')
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else '%s-%d' % (a, n))
        found.update(re.findall(r'<a (?:name|id)="([^"]+)"', text))
        cache[path] = found
    return cache[path]


def broken(root):
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith('.md'):
                continue
            md = os.path.join(d, name)
            for line in prose(md):
                for target in LINK.findall(line):
                    if re.match(r'[A-Za-z][A-Za-z0-9+.-]*:', target):
                        continue  # http:, https:, mailto:
                    path, _, anchor = target.partition('#')
                    dest = os.path.normpath(os.path.join(d, path)) if path else md
                    rel = os.path.relpath(md, root)
                    if not os.path.exists(dest):
                        yield '%s: %s: no such file' % (rel, target)
                    elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
                        yield '%s: %s: no such heading' % (rel, target)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write('usage: doclinks.py DIR\n')
        return 2
    bad = 0
    for line in broken(sys.argv[1]):
        print(line)
        bad = 1
    return bad


if __name__ == '__main__':
    sys.exit(main())
