#!/usr/bin/env python3
"""sizes.py - no source file of src/ over 700 lines, no function over 100 (docs/design.md):
a file that grows past them is split by what it holds. TAP; a self-test first shows that the
function reader finds a long function, and an initializer or a struct is not one."""
import os
import re
import sys

MAX_FILE = 700
MAX_FUNC = 100


def strip(text):
    """The text with comments, strings and character literals blanked, lines kept."""
    pat = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)


def functions(text):
    """(name, first line, lines) of each function defined at file scope."""
    out = []
    depth = 0
    stmt = ''          # the file-scope text since the last ; or }
    start = None
    name = None
    line = 1
    for ch in strip(text):
        if ch == '\n':
            line += 1
        if depth == 0:
            if ch == '{':
                head = stmt.strip()
                m = re.search(r'(\w+)\s*\([^;]*\)\s*$', head)
                if m and '=' not in head.split('(')[0] and not re.match(
                        r'(typedef|struct|union|enum)\b[^(]*$', head):
                    name, start = m.group(1), line - head.count('\n')
                else:
                    name = None
                depth = 1
                stmt = ''
                continue
            if ch in ';}':
                stmt = ''
            else:
                stmt += ch
            if ch == '#':  # a preprocessor line at file scope ends no statement of ours
                pass
            continue
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                if name:
                    out.append((name, start, line - start + 1))
                name = None
                stmt = ''
    return out


def self_test():
    long_body = '\n'.join('    x++;' for _ in range(99))
    sample = ('static const int t[] = {\n1,\n2 };\nstruct s {\n int a;\n};\n'
              'static int f(int x)\n{\n' + long_body + '\n    return x;\n}\n'
              'int g(void) { return "}" [0]; }\n')
    found = {n: ln for n, _, ln in functions(sample)}
    return found == {'f': 102, 'g': 1}, found


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'src')
    src = os.path.join(src, 'src') if os.path.isdir(os.path.join(src, 'src')) else src
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs
                   if f.endswith(('.c', '.h')))
    ok, found = self_test()
    results = [(ok, 'self-test: a 102-line function is found, an initializer and a struct are not'
                + ('' if ok else ' (found %r)' % found))]
    for path in files:
        rel = os.path.relpath(path, os.path.dirname(src))
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read()
        n = text.count('\n')
        results.append((n <= MAX_FILE, '%s: %d lines (at most %d)' % (rel, n, MAX_FILE)))
        if path.endswith('.c'):
            long = [(nm, at, ln) for nm, at, ln in functions(text) if ln > MAX_FUNC]
            detail = ', '.join('%s() at line %d: %d lines' % x for x in long)
            results.append((not long, '%s: no function over %d lines%s'
                            % (rel, MAX_FUNC, ' (' + detail + ')' if long else '')))
    print('1..%d' % len(results))
    for i, (good, what) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if good else 'not ok', i, what))
    return 0 if all(g for g, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
