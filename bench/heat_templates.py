"""The public heat-templates sweep: every HOT template of openstack/heat-templates (``hot/``),
or every CFN one (``cfn/``: AWSTemplateFormatVersion or HeatTemplateFormatVersion, JSON or
YAML), read as a user would give it to stoker.

For each template (nested templates and ``get_file`` files read beside it, as the CLI
reads them), it prints whether every resource type it names, nested templates included,
is one stoker has; for those, whether stoker validates it; and with ``--cloud``, whether
a stack of it creates against the test cloud and deletes again, with parameters filled in
the way a user of that cloud would fill them (a key pair, the m1.tiny/m1.small flavors,
the stoker-tiny image, a private network and subnet, a public network), and the time
each took. Images and flavors a template names by default or allows by ``allowed_values``
are registered first (a 64 KiB image, a small flavor) so its own constraints are met.

    git clone https://opendev.org/openstack/heat-templates /tmp/heat-templates
    .venv/bin/python bench/heat_templates.py /tmp/heat-templates/hot            # types and validation
    .venv/bin/python bench/heat_templates.py /tmp/heat-templates/hot --cloud    # and create/delete
    .venv/bin/python bench/heat_templates.py /tmp/heat-templates/cfn            # the CFN templates

The cloud: the dev cloud ``python -m tests.cloud start`` left running, else one started
for the run. The add-on services a template's types need (Octavia, Barbican, Designate,
Swift, Zaqar: ``tests/cloud/addons``) are started the first time a template needs them,
through the same launchers the cloud tests use, and stopped at the end; Keystone's types
need none, and their templates run as the cloud's admin (Keystone's policy lets only
administrators manage its objects), the others as the project member ``demo``. The
boot-config templates' ``get_file`` reads a heat-agents checkout beside the templates':

    git clone https://opendev.org/openstack/heat-agents /tmp/heat-agents

Nothing is asserted; it prints a line per template and a summary.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TIMEOUT_MINS = 10


@dataclass
class Outcome:
    template: str
    missing: set[str] = field(default_factory=set)
    validation: str = ""
    create: str = ""
    create_s: float = 0.0
    delete: str = ""
    delete_s: float = 0.0


def _load(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError, OSError):  # OSError: a template rendered from a .j2 one, not there
        return None


# The keys that make a file a template: HOT's, and the two CFN ones Heat reads.
VERSION_KEYS = ("heat_template_version", "AWSTemplateFormatVersion", "HeatTemplateFormatVersion")


def hot_templates(hot: Path) -> list[Path]:
    """The templates under ``hot`` (HOT or CFN; the name is the sweep's first use)."""
    found = []
    for path in sorted(hot.rglob("*")):
        if path.suffix in (".yaml", ".yml", ".template") and path.is_file():
            data = _load(path)
            if isinstance(data, dict) and any(key in data for key in VERSION_KEYS):
                found.append(path)
    return found


def resource_types(path: Path, seen: set[Path] | None = None) -> set[str]:
    """The types a template names, with those of the local templates it uses as types."""
    seen = set() if seen is None else seen
    if path in seen:
        return set()
    seen.add(path)
    data = _load(path)
    types: set[str] = set()
    resources = (data.get("resources") or data.get("Resources")) if isinstance(data, dict) else None
    for definition in (resources or {}).values() if isinstance(resources, dict) else ():
        if not isinstance(definition, dict):
            continue
        kind = definition.get("type") or definition.get("Type")
        if isinstance(kind, str):
            if kind.endswith((".yaml", ".yml", ".template")) and "://" not in kind:
                types |= resource_types((path.parent / kind).resolve(), seen)
            else:
                types.add(kind)
        properties = definition.get("properties") or definition.get("Properties")
        if kind == "OS::Heat::ResourceGroup" and isinstance(properties, dict):
            inner = (properties.get("resource_def") or {}).get("type") if isinstance(properties.get("resource_def"), dict) else None
            if isinstance(inner, str):
                if inner.endswith((".yaml", ".yml")):
                    types |= resource_types((path.parent / inner).resolve(), seen)
                else:
                    types.add(inner)
    return types


# -- the cloud side --------------------------------------------------------------------


class Fixtures:
    """What a user of the test cloud has before creating a stack from a public template."""

    def __init__(self, cloud: Any):
        self.cloud = cloud
        # A project member, as most users are: the stacks run as demo, in demo's project,
        # where its private network is the one network Nova may pick by itself. Images,
        # flavors and the external network are the admin's, as on any cloud.
        self.admin = cloud.connect("admin")
        self.connection = cloud.connect("demo")
        suffix = secrets.token_hex(3)
        compute, network = self.connection.compute, self.connection.network
        self.made: list[tuple[str, Any]] = []
        self.key_name = f"sweep-{suffix}"
        self.made.append(("keypair", compute.create_keypair(name=self.key_name)))
        self.public = self.admin.network.create_network(name=f"sweep-public-{suffix}", is_router_external=True)
        self.made.append(("public network", self.public))
        self.public_subnet = self.admin.network.create_subnet(network_id=self.public.id, cidr="172.26.0.0/24", ip_version=4, enable_dhcp=False)
        self.private = network.create_network(name=f"sweep-private-{suffix}")
        self.made.append(("network", self.private))
        self.private_subnet = network.create_subnet(network_id=self.private.id, cidr="10.78.0.0/24", ip_version=4)
        self.router = network.create_router(name=f"sweep-{suffix}", external_gateway_info={"network_id": self.public.id})
        network.add_interface_to_router(self.router, subnet_id=self.private_subnet.id)
        self.made.append(("router", self.router))
        self.images: dict[str, str] = {cloud.image_name: cloud.image_id}
        self.flavors: dict[str, str] = dict(cloud.flavors)
        self.server_id: str | None = None
        self.pool_id: str | None = None
        self.group_name: str | None = None

    def image(self, name: str) -> str:
        if name not in self.images:
            found = self.admin.image.find_image(name)
            if found is None:
                found = self.admin.image.create_image(name=name, disk_format="raw", container_format="bare", visibility="public", data=bytes(64 * 1024))
                self.made.append(("image", found))
            self.images[name] = found.id
        return name

    def flavor(self, name: str) -> str:
        if name not in self.flavors:
            found = self.admin.compute.find_flavor(name)
            if found is None:
                found = self.admin.compute.create_flavor(name=name, ram=256, vcpus=1, disk=1)
                self.made.append(("flavor", found))
            self.flavors[name] = found.id
        return name

    def server(self) -> str:
        if self.server_id is None:
            server = self.connection.compute.create_server(
                name=f"sweep-existing-{secrets.token_hex(3)}", flavor_id=self.flavors["m1.tiny"], image_id=self.cloud.image_id, networks=[{"uuid": self.private.id}]
            )
            self.connection.compute.wait_for_server(server, wait=300)
            self.made.append(("server", server))
            self.server_id = server.id
        return self.server_id

    def pool(self) -> str:
        """A load balancer pool in demo's private subnet (Octavia), as lb_server.yaml's
        ``pool_id`` asks: made once, through a listener, each step waited ACTIVE."""
        if self.pool_id is None:
            # A new connection: the catalog is read at authentication, and Octavia may
            # have been started (its endpoint moved) since the others were made.
            self.lbaas_connection = self.cloud.connect("demo")
            lbaas = self.lbaas_connection.load_balancer
            suffix = secrets.token_hex(3)
            # The VIP on a network of its own, the servers (members) on the private one:
            # a member on the VIP's own subnet meets Octavia's no-op driver gap
            # (tests/cloud/README.md, Octavia), which no real Neutron has.
            front = self.lbaas_connection.network.create_network(name=f"sweep-front-{suffix}")
            self.made.append(("network", front))
            front_subnet = self.lbaas_connection.network.create_subnet(network_id=front.id, cidr="10.77.0.0/24", ip_version=4)
            balancer = lbaas.create_load_balancer(name=f"sweep-{suffix}", vip_subnet_id=front_subnet.id)
            self.made.append(("load balancer", balancer))
            lbaas.wait_for_load_balancer(balancer.id, wait=300)
            listener = lbaas.create_listener(name=f"sweep-{suffix}", loadbalancer_id=balancer.id, protocol="HTTP", protocol_port=80)
            lbaas.wait_for_load_balancer(balancer.id, wait=300)
            pool = lbaas.create_pool(name=f"sweep-{suffix}", listener_id=listener.id, protocol="HTTP", lb_algorithm="ROUND_ROBIN")
            lbaas.wait_for_load_balancer(balancer.id, wait=300)
            self.pool_id = pool.id
        return self.pool_id

    def group(self) -> str:
        """A Keystone group in the default domain, for a user's ``groups``."""
        if self.group_name is None:
            group = self.admin.identity.create_group(name=f"sweep-{secrets.token_hex(3)}", domain_id="default")
            self.made.append(("group", group))
            self.group_name = group.name
        return self.group_name

    def close(self) -> None:
        compute, network, image = self.connection.compute, self.connection.network, self.admin.image
        for kind, item in reversed(self.made):
            try:
                if kind == "keypair":
                    compute.delete_keypair(item, ignore_missing=True)
                elif kind == "server":
                    compute.delete_server(item, ignore_missing=True)
                    compute.wait_for_delete(item, wait=120)
                elif kind == "router":
                    network.remove_interface_from_router(item, subnet_id=self.private_subnet.id)
                    network.delete_router(item, ignore_missing=True)
                elif kind in ("network", "public network"):
                    owner = self.admin.network if kind == "public network" else network
                    for port in owner.ports(network_id=item.id):
                        owner.delete_port(port, ignore_missing=True)
                    owner.delete_network(item, ignore_missing=True)
                elif kind == "image":
                    image.delete_image(item, ignore_missing=True)
                elif kind == "flavor":
                    self.admin.compute.delete_flavor(item, ignore_missing=True)
                elif kind == "load balancer":
                    self.lbaas_connection.load_balancer.delete_load_balancer(item, ignore_missing=True, cascade=True)
                    self.lbaas_connection.load_balancer.wait_for_delete(item, wait=120)
                elif kind == "group":
                    self.admin.identity.delete_group(item, ignore_missing=True)
            except Exception as error:  # noqa: BLE001 - clean up what can be
                print(f"  (clean-up of {kind} failed: {error})", file=sys.stderr)

    # -- filling a template's parameters, as a user of this cloud would --------------

    def value(self, name: str, schema: dict[str, Any]) -> Any:
        lowered = name.lower()
        default = schema.get("default")
        allowed = [value for constraint in schema.get("constraints") or [] if isinstance(constraint, dict) for value in constraint.get("allowed_values") or []]
        custom = {constraint.get("custom_constraint") for constraint in schema.get("constraints") or [] if isinstance(constraint, dict)}
        known = self._known(lowered, default)
        if known is not None:
            return known
        if "glance.image" in custom or "image" in lowered:
            return self.image(str(allowed[0] if allowed and default is None else default or self.cloud.image_name))
        if "nova.flavor" in custom or "flavor" in lowered or "instance_type" in lowered:
            return self.flavor(str(default or (allowed[0] if allowed else "m1.tiny")))
        if "nova.keypair" in custom or re.search(r"(^|_)key(_name)?$", lowered):
            return self.key_name
        if re.search(r"(server|instance)_id$", lowered):
            return self.server()
        if re.search(r"public|external|floating", lowered):
            return self.public.id if lowered.endswith("_id") else self.public.name
        if "subnet" in lowered:
            return self.private_subnet.id
        if lowered.endswith(("net_name", "network_name")):
            return f"sweep-net-{secrets.token_hex(2)}"
        if lowered.endswith("cidr"):
            return "10.79.0.0/24"
        if lowered.endswith("gateway"):
            return "10.79.0.1"
        if lowered.endswith("pool_start"):
            return "10.79.0.10"
        if lowered.endswith("pool_end"):
            return "10.79.0.100"
        if re.search(r"(^|_)net(work)?(_|$)", lowered):
            return self.private.id if lowered.endswith("_id") else self.private.name
        if lowered == "availability_zone":
            return "nova"
        if default is None and "email" in lowered:
            return "sweep@example.com"
        if default is not None:
            return default
        if allowed:
            return allowed[0]
        kind = schema.get("type")
        if kind == "number":
            return 1
        if kind == "comma_delimited_list":
            return "8,12"
        if kind == "json":
            return {}
        if kind == "boolean":
            return False
        return _string_for(schema)

    def _known(self, lowered: str, default: Any) -> Any:
        """What a user gives the parameters of the Keystone, Barbican and Octavia
        templates that the generic rules below would fill wrongly: Keystone's own domain,
        project, role and region; a future expiry; URLs; an existing pool and group."""
        if lowered == "pool_id":
            return self.pool()
        if lowered == "user_groups":
            return self.group()
        if lowered.endswith("_url"):
            return f"http://127.0.0.1:9/{lowered.removesuffix('_url')}"
        if lowered == "expiration" and (default is None or str(default) < time.strftime("%Y-%m-%d")):
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 30 * 86400))
        if default is not None:
            return None
        if lowered.endswith("_domain") or lowered == "domain":
            return "default"
        if lowered.endswith(("_project", "default_project")):
            return "demo"
        if lowered.endswith("_role") or lowered == "role":
            return "member"
        if lowered == "region":
            return "RegionOne"
        if lowered.endswith("region_id") or lowered == "name" or lowered.endswith("_name") and not re.search(r"image|flavor|key|net", lowered):
            return f"sweep_{lowered}_{secrets.token_hex(2)}"
        if lowered == "type":
            return f"sweep-{secrets.token_hex(2)}"
        if lowered.endswith("enabled"):
            return True
        return None

    def nested_defaults(self, path: Path) -> dict[str, Any]:
        """What a user gives the nested templates through ``parameter_defaults``: their
        defaults that cannot work here (container_generic.yaml's nested secret.yaml
        expires in 2017), a later value for each."""
        found: dict[str, Any] = {}
        data = _load(path) or {}
        for definition in (data.get("resources") or {}).values() if isinstance(data.get("resources"), dict) else ():
            kind = definition.get("type") if isinstance(definition, dict) else None
            if isinstance(kind, str) and kind.endswith((".yaml", ".yml")) and "://" not in kind:
                nested = (path.parent / kind).resolve()
                for name, schema in ((_load(nested) or {}).get("parameters") or {}).items():
                    default = schema.get("default") if isinstance(schema, dict) else None
                    if default is not None and (value := self._known(name.lower(), default)) is not None:
                        found[name] = value
        return found

    def parameters(self, path: Path) -> dict[str, Any]:
        data = _load(path) or {}
        return {name: self.value(name, schema if isinstance(schema, dict) else {}) for name, schema in (data.get("parameters") or {}).items()}


def _string_for(schema: dict[str, Any]) -> str:
    """A string that meets the parameter's length and pattern constraints (a password)."""
    low, high, patterns = 1, 64, []
    for constraint in schema.get("constraints") or []:
        if isinstance(constraint, dict) and isinstance(constraint.get("length"), dict):
            low = constraint["length"].get("min", low)
            high = constraint["length"].get("max", high)
        if isinstance(constraint, dict) and constraint.get("allowed_pattern"):
            patterns.append(constraint["allowed_pattern"])
    for seed in ("Sweep1secret", "sweep1secret", "Sweep", "sweep", "Sw1", "Sweep-1secret"):
        text = (seed * 8)[: max(low, min(len(seed) + 6, high))]
        if all(re.fullmatch(pattern, text) for pattern in patterns):
            return text
    return ("Sweep1" * 8)[:low]


def _attach_cloud() -> tuple[Any, bool]:
    from tests.cloud.__main__ import attach_dev

    attached = attach_dev()
    if attached is not None:
        return attached, False
    from tests.cloud.cloud import DevCloud

    directory = Path(tempfile.mkdtemp(prefix="stoker-sweep-"))
    return DevCloud(directory).start(), True


class AddOns:
    """The add-on services templates need, each started the first time one does (through
    ``tests.cloud.addons``' launchers) and all stopped by ``stop()``."""

    def __init__(self, cloud: Any):
        self.cloud = cloud
        self.stops: dict[str, Any] = {}
        self.failed: dict[str, str] = {}

    def ensure(self, types: set[str]) -> str:
        """Start what ``types`` need; why one did not start, or ''."""
        from tests.cloud.addons import needed, start_for

        for family in sorted(needed(types)):
            if family in self.stops or family in self.failed:
                continue
            began = time.monotonic()
            try:
                _service, stop = start_for(family, self.cloud, Path(tempfile.mkdtemp(prefix=f"stoker-sweep-{family}-")))
            except Exception as error:  # noqa: BLE001 - reported for each template that needs it
                self.failed[family] = _first_line(error)
                print(f"({family} did not start: {self.failed[family]})", flush=True)
                continue
            self.stops[family] = stop
            print(f"({family} started in {time.monotonic() - began:.0f} s)", flush=True)
        missing = [f"{family} did not start: {self.failed[family]}" for family in sorted(needed(types)) if family in self.failed]
        return "; ".join(missing)

    def stop(self) -> None:
        for family, stop in reversed(list(self.stops.items())):
            try:
                stop()
            except Exception as error:  # noqa: BLE001 - the others still stop
                print(f"  (stopping {family} failed: {error})", file=sys.stderr)
        self.stops.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hot", type=Path, help="the hot/ directory of a heat-templates checkout (or any directory of HOT templates: tripleo-heat-templates, magnum/drivers)")
    parser.add_argument("--cloud", action="store_true", help="also create and delete each supported template on the test cloud")
    parser.add_argument("--only", nargs="*", default=[], help="templates (paths under hot/) to take, default all")
    parser.add_argument(
        "--timeout-mins", type=int, default=TIMEOUT_MINS,
        help=f"each stack's timeout_mins (default {TIMEOUT_MINS}): software deployments wait for agents the test cloud's fake servers do not run",
    )
    parser.add_argument(
        "--files-root", type=Path, default=None,
        help="read get_file targets anywhere under this directory (the CLI's --files-root; default: the checkout, the parent of HOT_DIR); "
        "the boot-config templates name files of a heat-agents checkout beside it",
    )
    parser.add_argument(
        "-e", "--environment", type=Path, action="append", default=[],
        help="an environment file given with every template, as the CLI's -e (magnum's drivers map their Magnum::* types in them); "
        "the types its resource_registry maps count as known",
    )
    parser.add_argument(
        "--dump", type=Path, default=None,
        help="write each template that names only types stoker has, with its files and environments, as JSON in this "
        "directory: bench/heat_validate.py validates the same inputs with Heat",
    )
    parser.add_argument(
        "--max-nested-depth", type=int, default=5,
        help="max_nested_depth (default 5, Heat's); TripleO's overcloud needs 7, as its undercloud's heat.conf sets",
    )
    arguments = parser.parse_args(argv)

    from stoker.cli.files import files_for
    from stoker.sdk.exceptions import StokerError
    from stoker.service import Service, Source
    from stoker.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="stoker-sweep-"))
    service = Service(Settings(database_url=f"sqlite:///{work / 'sweep.sqlite'}", max_nested_depth=arguments.max_nested_depth))
    # The plugins, and what the global environment maps (Heat's default.yaml: the
    # OS::Ceilometer::* aliases, the template-backed AWS::CloudWatch::Alarm).
    known = set(service.registry.known_types()) | {name for name in service.registry.environment if name != "resources"}
    environments = [Source(path.read_text(), str(path)) for path in arguments.environment]
    for path in arguments.environment:
        registry = (_load(path) or {}).get("resource_registry") or {}
        known |= {name for name in registry if name != "resources"}
    outcomes: list[Outcome] = []
    unknown: Counter[str] = Counter()
    cloud = fixtures = None
    started = False
    addons: AddOns | None = None
    if arguments.cloud:
        from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source

        cloud, started = _attach_cloud()
        sources = {user: EnvironmentCloudSource(cloud.cloud_environ(user)) for user in ("admin", "demo")}
        fixtures = Fixtures(cloud)
        addons = AddOns(cloud)
    try:
        for path in hot_templates(arguments.hot):
            relative = str(path.relative_to(arguments.hot))
            if arguments.only and relative not in arguments.only:
                continue
            outcome = Outcome(relative, missing={t for t in resource_types(path) if t not in known})
            outcomes.append(outcome)
            unknown.update(outcome.missing)
            if outcome.missing:
                print(f"{relative:70} types missing: {', '.join(sorted(outcome.missing))}")
                continue
            source = Source(path.read_text(), str(path))
            parameters: dict[str, Any] = {}
            types = resource_types(path)
            not_started = addons.ensure(types) if addons is not None else ""
            if fixtures is not None:
                # Keystone's objects are the admin's to manage; everything else a member's.
                admin = any(t.startswith("OS::Keystone::") for t in types)
                set_cloud_source(sources["admin" if admin else "demo"])
            try:
                # As a user of the checkout would run it: --files-root at its top, since
                # some templates share files across directories (get_file: ../..).
                files = files_for(source, environments, service.limits(), arguments.files_root or arguments.hot.resolve().parent)
            except Exception as error:  # noqa: BLE001 - a file it names is not in the checkout (one rendered from a .j2)
                outcome.validation = f"files missing: {_first_line(error)}"
                print(f"{relative:70} validate: {outcome.validation}")
                continue
            if arguments.dump is not None:
                arguments.dump.mkdir(parents=True, exist_ok=True)
                dumped = {
                    "template": relative, "text": source.text, "files": files,
                    "environments": [{"name": e.name, "text": e.text} for e in environments],
                }
                (arguments.dump / f"{len(outcomes):04d}.json").write_text(json.dumps(dumped))
            try:
                parameters = fixtures.parameters(path) if fixtures is not None else {}
                nested = fixtures.nested_defaults(path) if fixtures is not None else {}
                if nested:
                    environments_used = [*environments, Source(yaml.safe_dump({"parameter_defaults": nested}), "parameter_defaults.yaml")]
                else:
                    environments_used = environments
                service.validate_template(source, environments_used, files=files, parameters=parameters)
                outcome.validation = "ok"
            except StokerError as error:  # a refusal, with stoker's reason
                outcome.validation = _first_line(error)
            except Exception as error:  # noqa: BLE001 - reported, the sweep goes on
                outcome.validation = f"internal error: {type(error).__name__}: {_first_line(error)}"
            line = f"{relative:70} validate: {outcome.validation}"
            if fixtures is not None and outcome.validation == "ok" and not_started:
                outcome.create = f"not run: {not_started}"
                line += f" | create: {outcome.create}"
            elif fixtures is not None and outcome.validation == "ok":
                name = f"sweep-{secrets.token_hex(3)}"
                try:
                    began = time.monotonic()
                    stack = service.create_stack(name, source, environments_used, parameters=parameters, files=files, timeout_mins=arguments.timeout_mins)
                    outcome.create_s = time.monotonic() - began
                    outcome.create = stack.state if stack.state == "CREATE_COMPLETE" else f"{stack.state}: {stack.status_reason}"
                    began = time.monotonic()
                    deleted = service.delete_stack(name)
                    outcome.delete_s = time.monotonic() - began
                    outcome.delete = deleted.state if deleted.state == "DELETE_COMPLETE" else f"{deleted.state}: {deleted.status_reason}"
                except Exception as error:  # noqa: BLE001
                    outcome.create = outcome.create or _first_line(error)
                line += f" | create: {outcome.create} ({outcome.create_s:.1f} s) | delete: {outcome.delete} ({outcome.delete_s:.1f} s)"
            print(line, flush=True)
    finally:
        if fixtures is not None:
            fixtures.close()
        if addons is not None:
            addons.stop()
        if started and cloud is not None:
            cloud.stop()
        service.close()
    supported = [o for o in outcomes if not o.missing]
    print()
    internal = sum(o.validation.startswith("internal error:") for o in supported)
    unreadable = sum(o.validation.startswith("files missing:") for o in supported)
    valid = sum(o.validation == "ok" for o in supported)
    print(
        f"{len(outcomes)} templates; {len(supported)} name only types stoker has; {unreadable} of those name files not there; "
        f"{valid} validate, {len(supported) - unreadable - valid - internal} are refused, {internal} meet an internal error"
    )
    if arguments.cloud:
        print(f"created: {sum(o.create == 'CREATE_COMPLETE' for o in supported)}; deleted: {sum(o.delete == 'DELETE_COMPLETE' for o in supported)}")
    print("types missing, by templates naming them: " + ", ".join(f"{t} ({n})" for t, n in unknown.most_common()))
    return 0


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return " / ".join(line.strip() for line in text.splitlines()[:3])


if __name__ == "__main__":
    sys.exit(main())
