"""A spec whose every free string is as hostile as its type allows renders, and each output read
by its real reader (ansible-inventory, an XML parser, the csv module, json, sh -n, shellcheck, a
POSIX shell running the script with logging stand-ins for its commands) holds exactly what the
plan says: no foreign line, field, host, element or command got in. slurmctld reads the same
render in tests/real/test_hostile_slurm_real.py."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.base.hostlist import expand
from cluster_iac.base.text import CONTROL
from cluster_iac.cli.main import main
from cluster_iac.render import Build, build

# Free text takes anything printable: formulas, pipes, XML comment ends, quotes, shell syntax.
EVIL = ("=HYPERLINK(\"http://x\") |a| <!-- -- --> <b>&amp;</b> 'q' \"d\" $(reboot) `id` ; "
        "# *e* _u_ [l](x) ~s~ \\ NodeName=evil")
EVIL_PATH = "/lustre/a b/$(reboot)/'q'/\"d\"/;rm -rf ~/`id`/--x/#c/*/&/|/<>"
EVIL_NCCL = "WARN;$(reboot)`id`'\"#x|y&z<>"
CASES = ["/lustre/ckpt", EVIL_PATH]
# slurm.extra values: slurm.conf's own syntax ('#' comments, '\\' escapes, blanks, quotes,
# Key=Value pairs), quoted and unquoted. The real slurmctld must read back exactly these
# (tests/real/test_hostile_slurm_real.py).
SLURM_EXTRA = {
    "TmpFS": "/tmp/a b\\#c 'q' $(reboot) `id` ; |x| <!-- --> NodeName=evil PartitionName=evil",
    "MailDomain": "x#y\\\\z=NodeName=evil",
}


def hostile_spec(slurm_version: str = "22.05") -> str:
    """The spec with every string hostile, targeting ``slurm_version``."""
    return SPEC_TEMPLATE.replace("SLURM_VERSION", slurm_version)


SPEC_TEMPLATE = f"""
cluster: {{name: tiny, site: "a.b-c_d", slurm_version: "SLURM_VERSION"}}
catalog:
  gpus:
    evilgpu: {{name: {json.dumps(EVIL)}, gres_type: h100.x-y_z, memory_gib: 80,
               max_power_w: 700, nvlink_gbs: 450, architecture: hopper,
               baseboard: hgx-hopper-8gpu,
               nvml_name: {json.dumps(EVIL)}, source: {json.dumps(EVIL)}}}
  platforms:
    evil-1u:
      name: {json.dumps(EVIL)}
      cpu: xeon-6430
      sockets: 2
      memory_gib: 512
      nics:
        - {{role: inband, model: cx6lx-25gbe, count: 1}}
        - {{role: bmc, model: eth-1g, count: 1}}
      max_power_w: 1000
      psus: {{count: 2, rating_w: 1200, required: 1}}
      height_u: 1
      source: {json.dumps(EVIL)}
node_types:
  gpu: {{platform: hgx-h100-8gpu, features: [a.b-c_d, "x_"]}}
  evil: {{platform: hgx-h100-8gpu, gpu: {{model: evilgpu}}}}
  head: {{platform: evil-1u}}
  mds:
    platform: lustre-server-2u
    nics:
      - {{role: compute, model: cx7-ndr, count: 1}}
      - {{role: inband, model: cx6lx-25gbe, count: 1}}
      - {{role: bmc, model: eth-1g, count: 1}}
node_groups:
  - {{name: g.p-u_1, node_type: gpu, count: 2, hostname: "gpu-##", racks: r-01}}
  - {{name: evil, node_type: evil, count: 1, hostname: "e#", racks: r-01}}
  - {{name: mds, role: lustre_mds, node_type: mds, count: 1, hostname: "mds#", racks: r-01}}
  - {{name: oss, role: lustre_oss, node_type: mds, count: 1, hostname: "oss#", racks: r-01}}
  - {{name: head, role: controller, node_type: head, count: 1, hostname: "head#", racks: r-01}}
rows:
  - {{name: a.b_c, racks: [{{names: r-01, pdu: p.d-u_1}}]}}
power:
  pdu_profiles:
    p.d-u_1: {{layout: three, voltage_v: 415, phases: 3, breaker_a: 63}}
slurm:
  extra: {json.dumps(SLURM_EXTRA)}
  partitions:
    - {{name: gpu.x-y_z, node_groups: [g.p-u_1, evil]}}
fabric:
  compute: {{leaf_switch: qm9700, racks: r-01}}
networks:
  management: {{cidr: 10.0.0.0/24, interface: e.t-h_0}}
  ipoib: {{cidr: 10.1.0.0/24, interface: i.b-0_x}}
nccl:
  env: {{NCCL_DEBUG: {json.dumps(EVIL_NCCL)}}}
storage:
  lustre:
    fsname: lfs
    mds_group: mds
    oss_group: oss
    mount: /lustre
    directories:
      - {{path: {json.dumps(CASES[0])}, pattern: checkpoint}}
      - {{path: {json.dumps(EVIL_PATH)}, pattern: checkpoint}}
"""
SPEC = hostile_spec()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    spec = folder / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    result = build(spec, emit=True)
    out = folder / "out"
    for path, text in result.files.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text, encoding="utf-8")
    return result, out


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is missing")
        pytest.skip(f"{name} is not installed")
    return path


def test_the_hostile_strings_reach_the_outputs(rendered: tuple[Build, Path]) -> None:
    """Else the tests below would prove nothing: the evil text is in the report, the evil path
    in the script, the evil NCCL value in the NCCL files."""
    files = rendered[0].files
    assert "HYPERLINK" in files["report.md"] and "NodeName=evil" in files["report.md"]
    assert "reboot" in files["lustre/setstripe.sh"]
    assert EVIL_NCCL in files["nccl/gpu.nccl.conf"]


def test_no_output_holds_a_control_character(rendered: tuple[Build, Path]) -> None:
    for path, text in rendered[0].files.items():  # tabs: fstab's separators, the templates'
        assert CONTROL.search(text.replace("\n", "").replace("\t", "")) is None, path


def test_csv_files_keep_their_columns_and_hold_no_formula(rendered: tuple[Build, Path]) -> None:
    result, _ = rendered
    for path, text in result.files.items():
        if not path.endswith(".csv"):
            continue
        rows = [row for row in csv.reader(io.StringIO(text)) if row and not row[0].startswith("#")]
        widths = {len(row) for row in rows}
        assert len(widths) == 1, (path, widths)
        for row in rows:
            for cell in row:
                assert not re.match(r"[=+@\t]", cell), (path, cell)
                assert not (cell.startswith("-") and not re.fullmatch(r"-[\d.eE+-]*", cell)), cell


def test_xml_files_hold_only_their_elements(rendered: tuple[Build, Path]) -> None:
    result, _ = rendered
    topo = [path for path in result.files if path.endswith(".xml")]
    assert topo
    for path in topo:
        root = ET.fromstring(result.files[path])
        assert {e.tag for e in root.iter()} <= {"system", "cpu", "pci", "nic", "net", "gpu"}
        assert result.files[path].count("<!--") == result.files[path].count("-->") == 1


def test_yaml_and_json_files_parse(rendered: tuple[Build, Path]) -> None:
    yaml = YAML(typ="safe", pure=True)
    for path, text in rendered[0].files.items():
        if path.endswith((".yml", ".yaml")):
            yaml.load(text)
        elif path.endswith(".json"):
            json.loads(text)


def test_ansible_inventory_lists_exactly_the_plans_hosts(rendered: tuple[Build, Path]) -> None:
    result, out = rendered
    listed = subprocess.run([_tool("ansible-inventory"), "-i", str(out / "ansible/inventory.yml"),
                             "--list"], capture_output=True, text=True, check=True,
                            env={**os.environ, "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true"})
    data = json.loads(listed.stdout)
    hosts = set(data["_meta"]["hostvars"])
    assert hosts == {d.name for d in result.plan.devices}
    assert "partition_gpu_x_y_z" in data and "row_a_b_c" in data


def _shell_scripts(rendered: tuple[Build, Path]) -> list[Path]:
    result, out = rendered
    return [out / path for path in result.files if path.endswith((".sh", ".env"))]


def test_shell_files_parse_and_pass_shellcheck(rendered: tuple[Build, Path]) -> None:
    scripts = _shell_scripts(rendered)
    assert any(s.suffix == ".sh" for s in scripts) and any(s.suffix == ".env" for s in scripts)
    for script in scripts:
        subprocess.run(["sh", "-n", str(script)], check=True)
        # SC2016 (info) says '$(...)' does not expand in single quotes: the point of quoting;
        # SC2034 says an env file's variables are unused: they are read by who sources it
        subprocess.run([_tool("shellcheck"), "-s", "sh", "-e", "SC2016,SC2034", str(script)],
                       check=True)


def test_setstripe_runs_only_its_commands_on_exactly_the_spec_paths(
        rendered: tuple[Build, Path], tmp_path: Path) -> None:
    """The script runs with 'mkdir' and 'lfs' replaced by stand-ins that log their arguments;
    every other command it could run is not on PATH."""
    _, out = rendered
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "log"
    for name in ("mkdir", "lfs"):
        stub = bin_dir / name
        stub.write_text(f"#!/bin/sh\nprintf '%s\\0' {name} \"$#\" \"$@\" >> {log}\n")
        stub.chmod(0o755)
    subprocess.run(["/bin/sh", str(out / "lustre/setstripe.sh")], check=True,
                   env={"PATH": str(bin_dir), "HOME": str(tmp_path / "home")}, cwd=tmp_path)
    calls = _calls(log.read_bytes().decode())
    assert [c[0] for c in calls] == ["mkdir", "lfs"] * len(CASES)
    assert [c[-1] for c in calls] == [p for p in CASES for _ in (1, 2)]
    assert not (tmp_path / "home").exists()


def _calls(text: str) -> list[list[str]]:
    fields = text.split("\0")[:-1]
    calls = []
    while fields:
        count = int(fields[1])
        calls.append([fields[0], *fields[2:2 + count]])
        fields = fields[2 + count:]
    return calls


def test_nccl_files_set_exactly_the_plans_variables(rendered: tuple[Build, Path]) -> None:
    result, out = rendered
    for name, env in result.plan.nccl.items():
        expected = {s.name: s.value for s in env.settings}
        assert expected["NCCL_DEBUG"] == EVIL_NCCL
        conf = result.files[f"nccl/{name}.nccl.conf"].splitlines()
        # NCCL's reader: NAME=rest of the line, verbatim
        assert dict(line.split("=", 1) for line in conf) == expected and len(conf) == len(expected)
        shown = subprocess.run(["env", "-i", "/bin/sh", "-c", "set -a; . \"$0\"; env -0",
                                str(out / f"nccl/{name}.env")], capture_output=True, check=True)
        pairs = dict(item.split("=", 1) for item in shown.stdout.decode().split("\0") if item)
        assert {k: v for k, v in pairs.items() if k.startswith("NCCL")} == expected


def test_markdown_tables_keep_their_columns(rendered: tuple[Build, Path]) -> None:
    result, _ = rendered
    for path, text in result.files.items():
        if not path.endswith(".md"):
            continue
        width = None
        for line in text.splitlines():
            if not line.startswith("|"):
                width = None
                continue
            cells = len(re.findall(r"(?<!\\)\|", line))
            width = width or cells
            assert cells == width, (path, line)
        assert "<b>" not in text and "[l](x)" not in text and "*e*" not in text, path


def test_slurm_conf_lines_are_only_the_keys_the_plan_writes(rendered: tuple[Build, Path]) -> None:
    """Structurally: Key=Value lines only, NodeName and PartitionName lines for exactly the
    plan's nodes and partitions, and the hostile text only on the slurm.extra lines that carry
    it. tests/real/test_hostile_slurm_real.py has slurmctld read the same files."""
    result, _ = rendered
    records: dict[str, list[str]] = {"NodeName": [], "PartitionName": []}
    for path, text in result.files.items():
        if not path.startswith("slurm/") or not path.endswith(".conf"):
            continue
        for line in text.splitlines():
            assert line == "" or line.startswith("#") or re.match(r"[A-Za-z]+=\S", line), line
            key, _, value = line.partition("=")
            if key in records and path == "slurm/slurm.conf":
                records[key] += expand(value.split()[0])
            if re.search(r"(Node|Partition)Name=evil|reboot", line) and not line.startswith("#"):
                assert path == "slurm/slurm.conf" and key in SLURM_EXTRA, (path, line)
    assert sorted(records["NodeName"]) == sorted(n.hostname for n in result.plan.compute_nodes)
    assert records["PartitionName"] == [p.name for p in result.plan.partitions]


# Each field that reaches a Slurm file, given text that would add a line, a key or a record:
# (spec text to replace, hostile replacement, the code expected at the replacement's line).
MAIL = '"MailDomain": ' + json.dumps(SLURM_EXTRA["MailDomain"])
SLURM_INJECTIONS = {
    "cluster name": ('name: tiny', 'name: "tiny\\nNodeName=evil"', "SPEC-CONTROL-CHAR"),
    "partition name": ('name: gpu.x-y_z', 'name: "gpu NodeName=evil"', "SPEC-NAME"),
    "partition name, line break": ('name: gpu.x-y_z', 'name: "gpu\\nNodeName=evil"',
                                   "SPEC-CONTROL-CHAR"),
    "max_time": ('node_groups: [g.p-u_1, evil]}',
                 'node_groups: [g.p-u_1, evil], max_time: "1 NodeName=evil"}', "SLURM-TIME"),
    "feature": ('"x_"', '"x NodeName=evil"', "SPEC-NAME"),
    "gres type": ('gres_type: h100.x-y_z', 'gres_type: "h100 Gres=gpu:evil:1"', "SPEC-NAME"),
    "hostname": ('hostname: "e#"', 'hostname: "e# NodeName=evil"', "SPEC-HOSTNAME"),
    "extra value, line break": (MAIL, '"MailDomain": "a\\nNodeName=evil"', "SPEC-CONTROL-CHAR"),
    "extra value, blank and quote": (MAIL, '"MailDomain": "a\\" NodeName=evil \\""',
                                     "SLURM-EXTRA-VALUE"),
    "extra key, owned": (MAIL, '"NodeName": "evil"', "SLURM-EXTRA-OWNED"),
    "extra key, blank": (MAIL, '"TmpFS NodeName": "evil"', "SLURM-EXTRA-KEY"),
}


@pytest.mark.parametrize("case", list(SLURM_INJECTIONS))
def test_slurm_fields_refuse_injection(case: str, tmp_path: Path) -> None:
    """Where the vocabulary forbids the hostile text, `render` refuses it with a located error
    at the field's line, its stable code, and writes nothing."""
    old, new, code = SLURM_INJECTIONS[case]
    assert SPEC.count(old) == 1, old
    text = SPEC.replace(old, new)
    line = text[:text.index(new)].count("\n") + 1
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 1, result.output
    reported = re.findall(r"spec\.yaml:(\d+):\d+: error\[([A-Z-]+)\]", result.output)
    assert reported == [(str(line), code)], result.output
    assert "Traceback" not in result.output and not out.exists()


def test_report_html_shows_the_hostile_text_as_text(rendered: tuple[Build, Path]) -> None:
    """report.html is made by a serializer: the evil name is one cell's text, its markup and
    Markdown are not markup, and the only script is the page's own table sorter."""
    from tests.test_drawings import _parsed

    page = _parsed(rendered[0].files["report.html"])
    assert f"{EVIL} (head)" in page.cells
    assert page.scripts == 1 and "b" not in page.tags


def test_every_drawing_of_the_hostile_spec_is_well_formed(rendered: tuple[Build, Path]) -> None:
    """The SVG writer escapes what the spec says: each drawing parses as XML."""
    import xml.etree.ElementTree as ET

    files = rendered[0].files
    drawings = [path for path in files if path.endswith(".svg")]
    assert drawings
    for path in drawings:
        ET.fromstring(files[path])


def test_the_fast_svg_writer_writes_its_oracles_bytes_for_the_hostile_spec(
        rendered: tuple[Build, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """svg.Canvas against svg.TreeCanvas (elements printed by formats.xml_text) on the hostile
    spec: the same bytes in every drawing. (The names a drawing shows are the spec's checked
    names, none of which holds a character XML escapes: tests/test_drawings.py gives both
    writers such text directly.)"""
    from cluster_iac.emit import drawings
    from cluster_iac.formats import svg

    build_ = rendered[0]
    monkeypatch.setattr(svg, "WRITER", svg.TreeCanvas)
    plain = drawings.render(build_.plan)
    assert len(plain) > 4 and {path: build_.files[path] for path in plain} == plain


def test_report_html_keeps_a_script_end_as_text(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile spec with a platform's name that would end the page's script and style and
    start its own: report.html and every sheet's page show it as text, the page's script is
    its own alone; and html.Page writes the bytes of html.TreePage, its oracle (elements
    printed by ElementTree's HTML serializer)."""
    from cluster_iac.emit import drawings, report_html
    from cluster_iac.formats import html
    from tests.test_drawings import _parsed

    name = f"{EVIL} </script><script>alert(1)</script></style><style>*{{}}</style> </td></tr>"
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace(f"name: {json.dumps(EVIL)}\n      cpu:",
                                 f"name: {json.dumps(name)}\n      cpu:"), encoding="utf-8")
    build_ = build(spec, emit=True)
    pages = {path: text for path, text in build_.files.items() if path.endswith(".html")}
    page = _parsed(pages["report.html"])
    assert f"{name} (head)" in page.cells
    assert page.scripts == 1 and page.tags.count("style") == 1 and "b" not in page.tags
    for text in pages.values():
        assert text.count("<script>") == text.count("</script>") == 1
    monkeypatch.setattr(html, "WRITER", html.TreePage)
    plain = {"report.html": report_html.page(build_.plan, build_.files["report.md"])}
    plain |= {path: text for path, text in drawings.render(build_.plan).items()
              if path.endswith(".html")}
    assert len(plain) > 1 and plain == pages
