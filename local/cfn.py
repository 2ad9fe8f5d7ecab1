"""Read template.yaml the way CloudFormation does, far enough to build local resources from it.

The intrinsics a SAM template uses are resolved (Ref, GetAtt, Sub, If and the condition functions,
Join, Select, Split, FindInMap, Base64); resources are addressed by logical id. ``Rules`` (parameter
assertions for deployments) are not evaluated: the local stack chooses its own parameter values. Written by hand because
cfn-lint's decoder keeps the tags but resolves nothing, and the local stack and the tests must agree
on one reading of the template.
"""

import base64
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"


# libyaml's parser where PyYAML was built with it (the wheels are): the template is read by every test
# process and every local stack, and the pure-Python parser takes ~0.4 s over its 5,000 lines, libyaml
# ~0.05 s. The tag constructors below are Python either way, so both read the template alike.
class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    pass


def _tag(name: str) -> Any:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if name == "Fn::GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {name: value}

    return construct


for _short, _long in {
    "Ref": "Ref",
    "GetAtt": "Fn::GetAtt",
    "Sub": "Fn::Sub",
    "If": "Fn::If",
    "Equals": "Fn::Equals",
    "Not": "Fn::Not",
    "And": "Fn::And",
    "Or": "Fn::Or",
    "Join": "Fn::Join",
    "Select": "Fn::Select",
    "Split": "Fn::Split",
    "GetAZs": "Fn::GetAZs",
    "ImportValue": "Fn::ImportValue",
    "FindInMap": "Fn::FindInMap",
    "Condition": "Condition",
}.items():
    _Loader.add_constructor(f"!{_short}", _tag(_long))


@cache
def load(path: Path = TEMPLATE) -> dict[str, Any]:
    """The template at ``path``, parsed once per process (``load()`` and ``load(TEMPLATE)`` are one
    parse; each spelling is resolved once, not on every call: readers call this per request)."""
    return _parsed(path.resolve())


@cache
def _parsed(path: Path) -> dict[str, Any]:
    with path.open() as handle:
        template: dict[str, Any] = yaml.load(handle, Loader=_Loader)
        return template


class UnresolvedReference(Exception):
    """A Ref, GetAtt or Sub the local stack cannot resolve: it names nothing that exists locally."""


@dataclass
class Resolver:
    """Resolves intrinsics against parameter values and a table of resource attributes.

    A reference to anything not known locally (a parameter without a value, a resource the local
    stack does not emulate or whose Condition is false, an attribute it does not know) raises
    ``UnresolvedReference``: a made-up value would only fail later, far from its cause. Only the
    branch an ``Fn::If`` takes is resolved, as in CloudFormation, and ``AWS::NoValue`` removes the
    property or list item it stands for.
    """

    template: Mapping[str, Any]
    parameters: dict[str, Any] = field(default_factory=dict)
    refs: dict[str, Any] = field(default_factory=dict)  # logical id -> Ref value
    attributes: dict[tuple[str, str], Any] = field(default_factory=dict)  # (logical id, attr) -> value
    # For reading the template without a stack (template tests): a resource of the template stands
    # for itself, Ref as its logical id, GetAtt as "LogicalId.Attribute". Never for the local stack.
    stand_ins: bool = False
    pseudo: dict[str, Any] = field(
        default_factory=lambda: {
            "AWS::Region": "us-east-1",
            "AWS::AccountId": "123456789012",
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": "shopfeed-local",
            "AWS::StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/shopfeed-local/local",
            "AWS::NotificationARNs": [],
            "AWS::NoValue": None,
        }
    )

    def __post_init__(self) -> None:
        for name, spec in self.template.get("Parameters", {}).items():
            if name not in self.parameters and "Default" in spec:
                self.parameters[name] = spec["Default"]
            if name in self.parameters and str(spec.get("Type")).startswith(("CommaDelimitedList", "List<")):
                value = self.parameters[name]
                self.parameters[name] = value.split(",") if isinstance(value, str) else value

    def condition(self, name: str) -> bool:
        conditions = self.template.get("Conditions") or {}
        if name not in conditions:
            raise UnresolvedReference(f"Condition {name} is not defined in the template")
        return bool(self.resolve(conditions[name]))

    def _ref(self, name: str) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.refs:
            return self.refs[name]
        if self.stand_ins and name in self.template.get("Resources", {}):
            return name
        function, _, alias = name.partition(".")
        if alias == "Alias":
            # SAM's `Ref: Function.Alias`: the function's AutoPublishAlias. Locally a function is its
            # own alias (the stack invokes the code it loaded).
            return name if self.stand_ins else self._attribute(function, "Arn")
        raise UnresolvedReference(f"Ref {name}: {self._missing(name)}")

    def _attribute(self, logical: str, attribute: str) -> Any:
        if (logical, attribute) in self.attributes:
            return self.attributes[(logical, attribute)]
        if self.stand_ins and logical in self.template.get("Resources", {}):
            return f"{logical}.{attribute}"
        why = f"the local stack does not know this attribute of {logical}" if logical in self.refs else None
        raise UnresolvedReference(f"GetAtt {logical}.{attribute}: {why or self._missing(logical)}")

    def _missing(self, name: str) -> str:
        resource = (self.template.get("Resources") or {}).get(name)
        if resource is None:
            return "no parameter, pseudo parameter or resource has this name (or the parameter has no value)"
        if "Condition" in resource and not self.condition(resource["Condition"]):
            return f"the resource's Condition {resource['Condition']} is false"
        return f"the local stack does not emulate {resource['Type']}"

    def resolve(self, node: Any) -> Any:
        if isinstance(node, list):
            return [v for v in (self.resolve(n) for n in node) if v is not None]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, arg),) = node.items()
            if key == "Ref":
                return self._ref(arg)
            if key == "Fn::GetAtt":
                logical, attr = arg if isinstance(arg, list) else str(arg).split(".", 1)
                return self._attribute(logical, self.resolve(attr))
            if key == "Fn::Sub":
                text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], self.resolve(arg[1]))
                return _SUBSTITUTION.sub(lambda m: self._sub(m.group(1), extra), text)
            if key == "Fn::If":
                name, yes, no = arg
                return self.resolve(yes if self.condition(name) else no)
            if key == "Fn::Equals":
                left, right = (self.resolve(a) for a in arg)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self.resolve(arg[0])
            if key == "Fn::And":
                return all(self.resolve(arg))
            if key == "Fn::Or":
                return any(self.resolve(arg))
            if key == "Fn::Join":
                separator, values = arg
                return separator.join(str(v) for v in self.resolve(values))
            if key == "Fn::Select":
                index, values = arg
                return self.resolve(values)[int(self.resolve(index))]
            if key == "Fn::Split":
                separator, text = arg
                return str(self.resolve(text)).split(separator)
            if key == "Fn::FindInMap":
                mapping, top, second = (self.resolve(a) for a in arg[:3])
                return self.template["Mappings"][mapping][top][second]
            if key == "Fn::Base64":
                return base64.b64encode(str(self.resolve(arg)).encode()).decode()
            if key == "Condition":
                return self.condition(arg)
            if key.startswith("Fn::"):
                raise UnresolvedReference(f"{key} is not supported by the local stack")
        return {k: v for k, v in ((k, self.resolve(v)) for k, v in node.items()) if v is not None}

    def resolve_keys(self, props: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
        """Only ``keys`` of ``props``, resolved: the properties the local stack uses, never the others
        (a deployment-only property may well refer to a resource that does not exist locally)."""
        resolved: dict[str, Any] = self.resolve({key: props[key] for key in keys if key in props})
        return resolved

    def _sub(self, name: str, extra: Mapping[str, Any]) -> str:
        if name.startswith("!"):  # ${!Literal} is the escape for a literal ${Literal}
            return "${" + name[1:] + "}"
        if name in extra:
            return str(extra[name])
        if "." in name and name not in self.pseudo:
            logical, attr = name.split(".", 1)
            return str(self._attribute(logical, attr))
        return str(self._ref(name))


_SUBSTITUTION = re.compile(r"\$\{([^}]+)\}")


def resources(kind: str, path: Path = TEMPLATE) -> dict[str, dict[str, Any]]:
    """Logical id -> resource of the given type (``AWS::DynamoDB::Table``, ...)."""
    return {name: r for name, r in load(path)["Resources"].items() if r["Type"] == kind}


def table_definitions(path: Path = TEMPLATE) -> dict[str, dict[str, Any]]:
    """CreateTable arguments for every table in the template, named by logical id."""
    resolver = Resolver(load(path))
    return {
        name: create_table_args(name, resolver.resolve_keys(resource["Properties"], TABLE_PROPERTIES))
        for name, resource in resources("AWS::DynamoDB::Table", path).items()
    }


# What create_table_args reads: a table's other properties are deployment-only and stay unresolved.
TABLE_PROPERTIES = (
    "TableName",
    "AttributeDefinitions",
    "KeySchema",
    "BillingMode",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
    "StreamSpecification",
    "ProvisionedThroughput",
    "TimeToLiveSpecification",
)


def create_table_args(name: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """CreateTable arguments from a table's resolved properties, named ``name``.

    Deployment-only settings (deletion protection, PITR, SSE, tags) are left out: no local engine
    needs them. ``_ttl_attribute`` is not a CreateTable argument: TTL is switched on separately.
    """
    args: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if props.get("GlobalSecondaryIndexes"):
        args["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    if props.get("LocalSecondaryIndexes"):
        args["LocalSecondaryIndexes"] = props["LocalSecondaryIndexes"]
    if "StreamSpecification" in props:
        args["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
    if args["BillingMode"] == "PROVISIONED":
        args["ProvisionedThroughput"] = props["ProvisionedThroughput"]
    args["_ttl_attribute"] = (props.get("TimeToLiveSpecification") or {}).get("AttributeName")
    return args


def http_routes(path: Path = TEMPLATE) -> list[tuple[str, str, str]]:
    """(method, path, function logical id) of every HttpApi event in the template."""
    routes = []
    for name, resource in resources("AWS::Serverless::Function", path).items():
        for event in (resource["Properties"].get("Events") or {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]
                routes.append((props["Method"].upper(), props["Path"], name))
    return routes


def handler_module(function: str, template: Mapping[str, Any] | None = None) -> str:
    """The Python module of a function's handler: CodeUri functions/<dir>/ and Handler app.x give
    ``functions.<dir>.app``."""
    props = function_properties(function, template)
    module = str(props["Handler"]).rsplit(".", 1)[0]
    return f"{Path(props['CodeUri']).as_posix().strip('/').replace('/', '.')}.{module}"


def api_functions(template: Mapping[str, Any] | None = None) -> list[str]:
    """Logical ids of the functions that serve HttpApi routes, in template order."""
    return list(dict.fromkeys(route.function for route in http_api_routes(template)))


def function_for(method: str, path: str, template: Mapping[str, Any] | None = None) -> str:
    """The logical id of the function serving ``method path`` (a concrete path: ``/orders/01J.../cancel``)."""
    for route in http_api_routes(template):
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(route.path))
        if route.method in (method.upper(), "ANY") and re.fullmatch(pattern, path):
            return route.function
    raise LookupError(f"no function serves {method} {path}")


def table_variables(template: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Environment variable → table logical id, for every function variable that is a table's Ref."""
    template = template if template is not None else load()
    tables = {name for name, r in template["Resources"].items() if r["Type"] == "AWS::DynamoDB::Table"}
    found: dict[str, str] = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        variables = (function_properties(name, template).get("Environment") or {}).get("Variables") or {}
        for variable, value in variables.items():
            if isinstance(value, dict) and value.get("Ref") in tables:
                found[variable] = value["Ref"]
    return found


def references(node: Any) -> set[str]:
    """Logical ids (and parameters) a template fragment refers to through Ref, GetAtt or Sub."""
    found: set[str] = set()
    if isinstance(node, list):
        for item in node:
            found |= references(item)
    elif isinstance(node, dict):
        if len(node) == 1 and "Ref" in node:
            found.add(node["Ref"])
        elif len(node) == 1 and "Fn::GetAtt" in node:
            found.add(node["Fn::GetAtt"][0])
        elif len(node) == 1 and "Fn::Sub" in node:
            arg = node["Fn::Sub"]
            text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])
            names = {m.split(".", 1)[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
            found |= {n for n in names if n not in extra} | references(extra)
        else:
            for value in node.values():
                found |= references(value)
    return found


def function_properties(name: str, template: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A serverless function's properties with ``Globals.Function`` applied, as SAM merges them.

    Maps merge key by key (so Environment.Variables of both apply); any other value of the
    function replaces the global one. Intrinsics are left unresolved.
    """
    template = template if template is not None else load()
    merged = _merge(template.get("Globals", {}).get("Function", {}), template["Resources"][name]["Properties"])
    return dict(merged)


def _merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict) and not _is_intrinsic(override):
        return {key: _merge(base[key], value) if key in base else value for key, value in override.items()} | {
            key: value for key, value in base.items() if key not in override
        }
    return override


def _is_intrinsic(node: Mapping[str, Any]) -> bool:
    if len(node) != 1:
        return False
    key = next(iter(node))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


@dataclass(frozen=True)
class HttpRoute:
    """One HttpApi route: method (or ANY), path with ``{params}``, the function, and its auth.

    ``authorizer`` is the authorizer's name, or None for a route open to anonymous callers.
    """

    method: str
    path: str
    function: str
    authorizer: str | None
    scopes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The route key API Gateway puts in ``routeKey``: ``GET /orders/{order_id}``."""
        return f"{self.method} {self.path}"


def http_api_routes(template: Mapping[str, Any] | None = None) -> list[HttpRoute]:
    """Every HttpApi event of every function, with the authorizer that guards it.

    A route without its own ``Auth`` uses the API's ``DefaultAuthorizer``; ``Authorizer: NONE``
    opens it, as in SAM.
    """
    template = template if template is not None else load()
    apis = {name: r for name, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::HttpApi"}
    routes = []
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for event in (resource["Properties"].get("Events") or {}).values():
            if event["Type"] != "HttpApi":
                continue
            props = event.get("Properties") or {}
            api_id = (props.get("ApiId") or {}).get("Ref")
            api_auth = (apis.get(api_id, {}).get("Properties") or {}).get("Auth") or {}
            auth = props.get("Auth") or {}
            authorizer = auth.get("Authorizer", api_auth.get("DefaultAuthorizer"))
            routes.append(
                HttpRoute(
                    method=str(props.get("Method", "ANY")).upper(),
                    path=props.get("Path", "$default"),
                    function=name,
                    authorizer=None if authorizer in (None, "NONE") else authorizer,
                    scopes=tuple(auth.get("AuthorizationScopes") or ()),
                )
            )
    return routes


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True)
