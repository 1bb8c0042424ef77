#!/usr/bin/env python3
"""megatron-flags.py - the long options Megatron-LM's argument parser defines.

Reads a Megatron-LM checkout's megatron/training/arguments.py without importing
it (it needs torch): every '--' string given to an add_argument call, and for
each ArgumentGroupFactory(Config, exclude=...) the options that
megatron/training/argument_utils.py derives from the dataclass's fields
(--field-name; a bool field defaulting to True as --no-field-name and
--disable-field-name; a field's argparse_meta arg_names instead). Prints them
sorted, one a line: the option alone when it takes no value (store_true and
the like, a bool field), else followed by VALUE, or by its choices joined
with '|' where the parser lists them (choices=, a Literal[...] field).

usage: tools/megatron-flags.py MEGATRON-LM-DIR > tests/data/megatron/flags.txt
"""
import ast
import os
import sys


def classes(root):
    """Every class definition under root/megatron: name -> (node, module)."""
    out = {}
    for d, _, files in os.walk(os.path.join(root, "megatron")):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            try:
                tree = ast.parse(open(path, encoding="utf-8").read())
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    out.setdefault(node.name, []).append(node)
    return out


NO_VALUE = ("store_true", "store_false", "store_const", "count", "help", "version")


def lit(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def field_flags(name, ann, value):
    """The options one dataclass field becomes, or [] when it is not init."""
    default = value
    meta_names = None
    meta_choices = None
    meta_action = None
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
        default = None
        for kw in value.keywords:
            if kw.arg == "init" and lit(kw.value) is False:
                return []
            if kw.arg == "default":
                default = kw.value
            if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if lit(k) == "argparse_meta" and isinstance(v, ast.Dict):
                        for k2, v2 in zip(v.keys, v.values):
                            if lit(k2) == "arg_names":
                                meta_names = lit(v2)
                            if lit(k2) == "choices":
                                meta_choices = lit(v2)
                            if lit(k2) == "action":
                                meta_action = lit(v2)
    is_bool = isinstance(ann, ast.Name) and ann.id == "bool"
    if meta_action in NO_VALUE or (is_bool and meta_action is None):
        arity = None
    elif meta_choices:
        arity = "|".join(str(c) for c in meta_choices)
    else:
        arity = literal_choices(ann) or "VALUE"
    if meta_names:
        return [(n, arity) for n in meta_names]
    flag = "--" + name.replace("_", "-")
    if is_bool and default is not None and lit(default) is True:
        return [("--no-" + name.replace("_", "-"), None),
                ("--disable-" + name.replace("_", "-"), None)]
    return [(flag, arity)]


def literal_choices(ann):
    """'a|b' for Literal['a', 'b'] (also inside Optional[...]), else None."""
    if not isinstance(ann, ast.Subscript):
        return None
    head = getattr(ann.value, "id", getattr(ann.value, "attr", ""))
    if head == "Optional":
        return literal_choices(ann.slice)
    if head == "Literal":
        v = lit(ann.slice)
        v = v if isinstance(v, tuple) else (v,)
        return "|".join(str(c) for c in v)
    return None


def dataclass_flags(cls, allc, exclude, seen):
    out = []
    for base in cls.bases:
        bname = getattr(base, "id", getattr(base, "attr", None))
        if bname in allc and bname not in seen:
            seen.add(bname)
            out += dataclass_flags(allc[bname][0], allc, exclude, seen)
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if name in exclude:
                continue
            ann = node.annotation
            if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", "") == "ClassVar":
                continue
            out += field_flags(name, ann, node.value)
    return out


def main():
    root = sys.argv[1]
    src = open(os.path.join(root, "megatron/training/arguments.py"), encoding="utf-8").read()
    tree = ast.parse(src)
    allc = classes(root)
    flags = {}
    lists = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
           isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.List):
            v = lit(node.value)
            if v is not None:
                lists[node.targets[0].id] = v
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if fn == "add_argument":
            arity = "VALUE"
            for kw in node.keywords:
                if kw.arg == "action" and lit(kw.value) in NO_VALUE:
                    arity = None
                if kw.arg == "choices" and isinstance(lit(kw.value), (list, tuple)) and arity:
                    arity = "|".join(str(c) for c in lit(kw.value))
            for a in node.args:
                v = lit(a)
                if isinstance(v, str) and v.startswith("--"):
                    flags[v] = arity
        elif fn == "ArgumentGroupFactory" and node.args:
            cname = getattr(node.args[0], "id", None)
            exclude = []
            for kw in node.keywords:
                if kw.arg == "exclude":
                    exclude = lit(kw.value) if lit(kw.value) is not None else \
                        lists.get(getattr(kw.value, "id", ""), [])
            if cname not in allc:
                sys.exit("megatron-flags: no class '%s' under %s" % (cname, root))
            for f, arity in dataclass_flags(allc[cname][0], allc, set(exclude), {cname}):
                flags[f] = arity
    for f in sorted(flags):
        print(f if flags[f] is None else f + " " + flags[f])


if __name__ == "__main__":
    main()
