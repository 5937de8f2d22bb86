#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Size limits of the source tree, outside tests/: no file over 600 lines, no function over
150 lines. A long file or function is one a reader cannot hold at once; split it by concept.

Files: C, C++, CUDA, OpenCL, Python, shell, automake/autoconf and Markdown sources (generated
autotools files are not sources). Functions: Python functions and methods (from the syntax
tree), and C/C++/CUDA function bodies: a brace block, outside any other function, that follows
a parameter list `)` (qualifiers, a trailing return type or a constructor's initialisers may
come between); lambdas and local classes count toward the function that holds them. A
function's length runs from its opening brace's line to its closing brace's line.

Usage: tools/check_code_size.py [SRCDIR]   (default: the folder above this script)
Exit status 1 and one line per violation when a limit is exceeded.
"""
import ast
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 150


C_LIKE = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cl")
OTHER = (".py", ".sh", ".mk", ".am", ".ac", ".md")
SKIP_DIRS = {".git", "tests", "autom4te.cache", "build-aux", "m4", "results", "__pycache__"}


def source_files(top):
    for root, dirs, files in os.walk(top):
        rel_root = os.path.relpath(root, top)
        dirs[:] = sorted(d for d in dirs
                         if not (rel_root == "." and (d in SKIP_DIRS or d.startswith("_")))
                         and d not in (".git", "__pycache__"))
        for name in sorted(files):
            rel = os.path.normpath(os.path.join(rel_root, name))
            if name.endswith(C_LIKE + OTHER) or rel == "run":
                yield rel


def strip_c(text):
    """Comments, string and character literals blanked; newlines kept, so lines still count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;{}()]*$|extern\s*\"\"\s*$")
FUNCTION_TAIL = re.compile(
    r"\)\s*(const|volatile|noexcept(\s*\([^()]*\))?|override|final|mutable|&|&&|\s)*"
    r"(->\s*[\w:<>,\s*&]+)?\s*$")


def looks_like_function(head):
    """head: the code between the previous ; { or } and this {, at namespace or class scope."""
    head = re.sub(r"\s+", " ", head).strip()
    if not head or CONTAINER.search(head) or head.endswith("=") or head.startswith("#"):
        return False
    # A constructor's initialiser list: cut at the ':' that follows the parameter list.
    m = re.search(r"\)\s*(noexcept\s*)?:(?!:)", head)
    if m:
        head = head[:m.start() + 1]
    return bool(FUNCTION_TAIL.search(head)) and not re.match(r"^(if|for|while|switch|catch)\b", head)


def c_functions(text):
    """(name, first line, last line) of every function body outside another function."""
    code = strip_c(text)
    # Preprocessor lines hold no braces that matter here; blank them (keep line count).
    code = re.sub(r"(?m)^[ \t]*#.*(\\\n.*)*$", lambda m: "\n" * m.group(0).count("\n"), code)
    found = []
    stack = []  # per open brace: "function" or "scope"
    start = 0   # where the current head began
    line = 1
    fn_open = None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            if "function" in stack:
                stack.append("inner")
            else:
                head = code[start:i]
                if looks_like_function(head):
                    stack.append("function")
                    name = re.findall(r"([~\w:]+)\s*\(", head)
                    fn_open = (name[0] if name else "?", line)
                else:
                    stack.append("scope")
            start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                found.append((fn_open[0], fn_open[1], line))
            start = i + 1
        elif c == ";":
            start = i + 1
    return found


def python_functions(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, node.lineno, node.end_lineno))
    return out


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    for rel in source_files(top):
        with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}): split it by concept")
        if rel.endswith(C_LIKE):
            functions = c_functions(text)
        elif rel.endswith(".py"):
            functions = python_functions(text)
        else:
            functions = []
        for name, first, last in functions:
            if last - first + 1 > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{first}: function {name} has {last - first + 1} lines "
                                f"(at most {MAX_FUNCTION_LINES}): split it")
    for p in problems:
        print(p)
    if problems:
        print(f"check_code_size: {len(problems)} over the limits")
        return 1
    print("check_code_size: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
