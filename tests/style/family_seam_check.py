#!/usr/bin/env python3
"""A model family is its folder: outside trainer/models/, no trainer source names a
family or its traits. Fails on a string literal that is a family's name or display
name, an identifier that is one of a family's own facts (a member of a struct its
*_family.hpp declares), or an include of a family's folder.

The families are read from trainer/models/*/*_family.cpp (`ModelFamily family{"name",
"Display", ...`); their facts from the structs of trainer/models/*/*_family.hpp.
Usage: family_seam_check.py SOURCE_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
models = root / "trainer" / "models"
names, traits, folders = set(), set(), set()
for f in models.glob("*/*_family.cpp"):
    folders.add(f.parent.name)
    for name, display in re.findall(r'ModelFamily\s+family\s*\{\s*"([^"]+)",\s*"([^"]+)"',
                                    f.read_text()):
        names.update({name, display})
for h in models.glob("*/*_family.hpp"):
    for body in re.findall(r"struct\s+\w+\s*\{([^}]*)\}", h.read_text()):
        traits.update(re.findall(r"\b(?:bool|int|double|std::int64_t)\s+(\w+)\s*[;=]", body))
if len(names) < 2 or not folders:
    sys.exit(f"family_seam_check: no families found under {models} (the pattern is stale)")

literal = re.compile(r'"((?:[^"\\]|\\.)*)"')
ident = re.compile(r"\b(" + "|".join(map(re.escape, sorted(traits))) + r")\b") if traits else None
include = re.compile(r'#include\s+"models/(' + "|".join(sorted(folders)) + r')/')
problems = []
for f in sorted((root / "trainer").rglob("*")):
    if f.suffix not in (".cpp", ".hpp") or models in f.parents:
        continue
    for n, line in enumerate(f.read_text().splitlines(), 1):
        code = line.split("//", 1)[0]
        where = f"{f.relative_to(root)}:{n}"
        for text in literal.findall(code):
            if text in names:
                problems.append(f'{where}: the family "{text}" by name')
        if ident and (m := ident.search(code)):
            problems.append(f"{where}: the family trait {m.group(1)}")
        if m := include.search(code):
            problems.append(f"{where}: includes the family folder models/{m.group(1)}/")
print(f"families {sorted(names)}; their facts {sorted(traits)}; folders {sorted(folders)}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
