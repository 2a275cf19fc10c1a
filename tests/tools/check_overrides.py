#!/usr/bin/env python3
"""Does any given program change an option's value outside its
check_pass_sizes()? (cpu_options.bats)

The check pass's sizes are set in check_pass_sizes(), which grading_begin()
calls before the settings line is printed, --dry-run answers and the memory
guard judges the sizes. A size changed later (an option's variable assigned
in main(), a count chosen between the check pass's and the option's, as in
`runs = check ? 3 : lab.opt.reps`) runs what the settings line does not say.
This reads each function of each file named (comments and strings taken
out) and prints, one a line, every statement that does so, and every file
without a check_pass_sizes(common_options *opt); exits 1 when it printed any.
A local of an option's name (ex09's level2() keeps its own `steps`) is not
the option. Text, not a compiler: a way of writing it that this does not
read is possible, and the --dry-run test beside it still compares the sizes.

    python3 tests/tools/check_overrides.py exercises/given/ex*.cu
"""
import re
import sys

TYPES = r"(?:int|double|float|size_t|unsigned|long|char)"
CHECK = r"\bcheck\w*(?:\(\))?\s*\?"  # check ? ... or grading_check() ? ...


def functions(code):
    """(header, body) of each top-level braced block."""
    found, depth, start, head = [], 0, 0, 0
    for i, c in enumerate(code):
        if c in ";}" and depth == 0:
            head = i + 1
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                found.append((code[head:start], code[start:i + 1]))
                head = i + 1
    return found


def statements(pattern, body):
    return [" ".join(s.split()) for s in re.findall(rf"[^;{{}}]*(?:{pattern})[^;{{}}]*", body)]


def overrides(path):
    src = open(path).read()
    names = re.findall(r'\{"[a-z0-9-]+", OPT_\w+, &(\w+)', src)
    code = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|' + r"'(?:\\.|[^'\\\n])+'", " ", src,
                  flags=re.S)
    found, hooks = [], 0
    for header, body in functions(code):
        if re.search(r"\bcheck_pass_sizes\(common_options \*opt\)\s*$", header):
            hooks += 1
            continue
        if "(" not in header:  # a table, a struct: not a function
            continue
        for name in names:
            local = rf"\b{TYPES}\s+(?:\**\w+\s*(?:=[^,;()]*)?,\s*)*\**{name}\s*[=;,)\[]"
            if re.search(local, header + body):
                continue
            changed = (rf"(?<![\w.>]){name}\s*(?:[-+*/]?=(?!=)|\+\+|--)|(?:\+\+|--){name}\b"
                       rf"|{CHECK}[^;:]*:\s*{name}\s*(?=[;,)])")
            found += [f"{path}: {name} changed: {s}" for s in statements(changed, body)]
        reps = rf"opt(?:\.|->)reps\s*=(?!=)|{CHECK}[^;]*opt(?:\.|->)reps"
        found += [f"{path}: --reps chosen outside check_pass_sizes(): {s}"
                  for s in statements(reps, body)]
    if hooks != 1:
        found.insert(0, f"{path}: no function check_pass_sizes(common_options *opt)")
    return found


if __name__ == "__main__":
    found = [line for path in sys.argv[1:] for line in overrides(path)]
    print("\n".join(found))
    sys.exit(1 if found else 0)
