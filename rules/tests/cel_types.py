"""Type-checks CEL expressions as kube-apiserver declares them, with Google's CEL checker (cel-expr-python,
the Python runtime over cel-cpp). Run by rules/tests/export_compile.rs; docs/reference/admission-policies.md §8
says what it follows and where it is stricter.

Reads JSON on stdin: a list of policies {name, mutating, conditions, variables: [[name, expr]], finals:
[[kind, expr]]}. Writes JSON on stdout: a list of {policy, what, error} (empty: every expression checks).

The declarations (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go, createEnvForOpts):
- object, oldObject: dyn; request: kubernetes.AdmissionRequest (BuildRequestType's fields);
- variables: each policy variable, with the type its expression checked to, visible to the variables after
  it and to the validations and mutations (composition.go: CompileAndStoreVariable adds a field of the
  variable's output type to "kubernetes.variables"); declared here as the qualified names
  `variables.<name>`, which the checker resolves the same way;
- JSONPatch (mutations): op, path, from strings, value dyn (pkg/cel/mutation/jsonpatch.go);
- the return types (compile.go compares with IsExactType): bool for a validation and a matchCondition,
  string for a messageExpression, list(JSONPatch) for a JSONPatch mutation, anything for a variable.
Functions: CEL's standard library, the strings extension, and Kubernetes' find/findAll
(pkg/cel/library/regex.go). namespaceObject, params and authorizer are not declared: the exported policies
have no paramKind, and never read the namespace object (stricter than the API server).

Literals: kube-apiserver validates that list and map literals hold one element type
(cel.ValidateHomogeneousAggregateLiterals, cel-go cel/validator.go: each element's checked type compared
with IsEquivalentType, for a list, a map's keys and a map's values). cel-cpp types mixed literals as
list(dyn); this script reads the checked expression (cel.expr.CheckedExpr) that the checker serializes and
applies cel-go's rule to the types it recorded for every element.
"""

import json
import re
import sys

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, struct_pb2

FIELD = descriptor_pb2.FieldDescriptorProto


def _message(name, fields):
    out = descriptor_pb2.DescriptorProto(name=name)
    for number, (field, kind, type_name, repeated) in enumerate(fields, start=1):
        f = out.field.add(name=field, number=number, type=kind)
        f.label = FIELD.LABEL_REPEATED if repeated else FIELD.LABEL_OPTIONAL
        if type_name:
            f.type_name = type_name
    return out


def _pool():
    """kubernetes.AdmissionRequest and JSONPatch as protobuf messages (what the checker takes for an
    object type)."""
    pool = descriptor_pool.DescriptorPool()
    struct = descriptor_pb2.FileDescriptorProto()
    struct_pb2.DESCRIPTOR.CopyToProto(struct)
    pool.Add(struct)
    s, m, b = FIELD.TYPE_STRING, FIELD.TYPE_MESSAGE, FIELD.TYPE_BOOL
    k8s = descriptor_pb2.FileDescriptorProto(
        name="kubernetes/admission.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    k8s.message_type.extend(
        [
            _message("GroupVersionKind", [("group", s, None, False), ("version", s, None, False), ("kind", s, None, False)]),
            _message("GroupVersionResource", [("group", s, None, False), ("version", s, None, False), ("resource", s, None, False)]),
            _message(
                "UserInfo",
                [
                    ("username", s, None, False),
                    ("uid", s, None, False),
                    ("groups", s, None, True),
                    # map(string, list(string)) upstream; a protobuf map cannot hold a list of strings.
                    ("extra", m, ".google.protobuf.Struct", False),
                ],
            ),
            _message(
                "AdmissionRequest",
                [
                    ("kind", m, ".kubernetes.GroupVersionKind", False),
                    ("resource", m, ".kubernetes.GroupVersionResource", False),
                    ("subResource", s, None, False),
                    ("requestKind", m, ".kubernetes.GroupVersionKind", False),
                    ("requestResource", m, ".kubernetes.GroupVersionResource", False),
                    ("requestSubResource", s, None, False),
                    ("name", s, None, False),
                    ("namespace", s, None, False),
                    ("operation", s, None, False),
                    ("userInfo", m, ".kubernetes.UserInfo", False),
                    ("dryRun", b, None, False),
                    ("options", m, ".google.protobuf.Value", False),
                ],
            ),
        ]
    )
    pool.Add(k8s)
    patch = descriptor_pb2.FileDescriptorProto(
        name="jsonpatch.proto", syntax="proto3", dependency=["google/protobuf/struct.proto"]
    )
    patch.message_type.append(
        _message(
            "JSONPatch",
            [("op", s, None, False), ("path", s, None, False), ("from", s, None, False), ("value", m, ".google.protobuf.Value", False)],
        )
    )
    pool.Add(patch)
    return pool


def _kubernetes_functions():
    """Kubernetes' regular expression library (k8s.io/apiserver/pkg/cel/library/regex.go)."""
    string, list_of_strings = cel.Type.STRING, cel.Type.List(cel.Type.STRING)
    return cel.CelExtension(
        "kubernetes.regex",
        [
            cel.FunctionDecl("find", [cel.Overload("string_find_string", string, [string, string], is_member=True)]),
            cel.FunctionDecl(
                "findAll",
                [
                    cel.Overload("string_find_all_string", list_of_strings, [string, string], is_member=True),
                    cel.Overload("string_find_all_string_int", list_of_strings, [string, string, cel.Type.INT], is_member=True),
                ],
            ),
        ],
    )


POOL = _pool()
ADMISSION_REQUEST = cel.Type("kubernetes.AdmissionRequest")
JSON_PATCHES = cel.Type.List(cel.Type("JSONPatch"))


def environment(variables):
    declared = {"object": cel.Type.DYN, "oldObject": cel.Type.DYN, "request": ADMISSION_REQUEST}
    for name, t in variables:
        declared["variables." + name] = t
    return cel.NewEnv(
        POOL,
        variables=declared,
        extensions=[ext_strings.ExtStrings(), _kubernetes_functions()],
    )


# --- cel.expr.CheckedExpr, read from its wire format (cel-spec proto/cel/expr/checked.proto, syntax.proto).


def _varint(data, i):
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data):
    """(field number, wire type, value) of one message: ints for varints, bytes for the rest."""
    i, out = 0, []
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def _first(fields, number):
    return next((v for n, _, v in fields if n == number), None)


# Expr: id = 2, const_expr = 3, ident_expr = 4, select_expr = 5, call_expr = 6, list_expr = 7,
# struct_expr = 8, comprehension_expr = 9.
# CreateList: elements = 1, optional_indices = 2. CreateStruct: message_name = 1, entries = 2;
# Entry: id = 1, field_key = 2, map_key = 3, value = 4. Call: target = 1, args = 3. Select: operand = 1.
# Comprehension: iter_range = 2, accu_init = 4, loop_condition = 5, loop_step = 6, result = 7.
CHILDREN = {5: (1,), 6: (1, 3), 9: (2, 4, 5, 6, 7)}


def _literal_problems(expr, types, out):
    fields = _fields(expr)
    for kind, _, body in fields:
        if kind == 7:
            elements = [_fields(e) for n, _, e in _fields(body) if n == 1]
            optional = {v for n, _, v in _fields(body) if n == 2}
            _same_types("list", [_first(e, 2) for i, e in enumerate(elements) if i not in optional], types, out)
            for n, _, e in _fields(body):
                if n == 1:
                    _literal_problems(e, types, out)
        elif kind == 8:
            struct = _fields(body)
            entries = [_fields(e) for n, _, e in struct if n == 2]
            if _first(struct, 1) in (None, b""):
                keys = [_first(_fields(_first(e, 3)), 2) for e in entries if _first(e, 3) is not None]
                _same_types("map keys", keys, types, out)
                values = [_first(_fields(_first(e, 4)), 2) for e in entries]
                _same_types("map values", values, types, out)
            for e in entries:
                for n in (3, 4):
                    child = _first(e, n)
                    if child is not None:
                        _literal_problems(child, types, out)
        elif kind in CHILDREN:
            for n, _, child in _fields(body):
                if n in CHILDREN[kind] and isinstance(child, bytes):
                    _literal_problems(child, types, out)


def _same_types(what, ids, types, out):
    """cel-go's rule: every element's checked type equivalent to the first's (the serialized cel.expr.Type
    of each, compared whole: same kind, name and parameters)."""
    found = [types.get(i) for i in ids]
    if len(set(found)) > 1:
        out.append(f"{what} of several types (cel.ValidateHomogeneousAggregateLiterals refuses it)")


def check(env, text, returns=None):
    """The errors of `text` in `env` (empty: it checks), and its type."""
    try:
        compiled = env.compile(text)
    except Exception as error:  # the checker's issues, as cel-cpp words them
        return [str(error).splitlines()[0]], None
    out = []
    typ = compiled.return_type()
    if returns is not None and not typ == returns:
        out.append(f"must evaluate to {returns.name()} but is {typ.name()}")
    anything = _fields(compiled.serialize())
    checked = _fields(_first(anything, 2))
    types = {}
    for n, _, entry in checked:
        if n == 3:
            e = _fields(entry)
            types[_first(e, 1)] = _first(e, 2)
    _literal_problems(_first(checked, 4), types, out)
    return out, typ


REFERENCE = re.compile(r"\bvariables\.([A-Za-z_][A-Za-z0-9_]*)")
CHECKED = {}


def cached_check(variables, text, returns=None):
    """check() in an environment declaring `variables`, remembered: an expression's check depends only on
    the declarations of the variables it names (the exported policies share most expressions)."""
    declared = dict(variables)
    key = (
        text,
        None if returns is None else returns.name(),
        tuple(sorted((n, declared[n].name() if n in declared else None) for n in set(REFERENCE.findall(text)))),
    )
    if key not in CHECKED:
        named = [(n, declared[n]) for n, _ in key[2] if n in declared]
        CHECKED[key] = check(environment(named), text, returns)
    return CHECKED[key]


def check_policy(policy):
    problems = []
    variables = []
    for i, condition in enumerate(policy["conditions"]):
        for error in cached_check([], condition, cel.Type.BOOL)[0]:
            problems.append((f"matchConditions[{i}]", error))
    for name, text in policy["variables"]:
        errors, typ = cached_check(variables, text)
        problems.extend((f"variables.{name}", e) for e in errors)
        # An object type is dyn to the expressions after it (composition.go, convertCelTypeToDeclType).
        variables.append((name, cel.Type.DYN if typ is None or typ.is_message() else typ))
    returns = {"expression": cel.Type.BOOL, "messageExpression": cel.Type.STRING, "jsonPatch": JSON_PATCHES}
    for kind, text in policy["finals"]:
        problems.extend((kind, e) for e in cached_check(variables, text, returns[kind])[0])
    return [{"policy": policy["name"], "what": what, "error": error} for what, error in problems]


def main():
    policies = json.load(sys.stdin)
    out = []
    for policy in policies:
        out.extend(check_policy(policy))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
