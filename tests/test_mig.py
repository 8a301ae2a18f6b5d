"""MIG: the catalog's profiles and slice grid against NVIDIA's MIG user guide, the spec's layouts
(located errors), gres.conf and slurm.conf GRES, mig-parted YAML, per-GPU defaults, busbw and the
health check. tests/real/test_mig_real.py has slurmd 22.05, 24.11 and 26.05 read the GRES."""

from __future__ import annotations

import typing

import pytest
from ruamel.yaml import YAML

from cluster_iac.base.errors import CompileError
from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.mig import cap_minor, driver_start, gpu_instance_id, mig_profiles, place
from cluster_iac.plan.collectives.jobs import partition_predictions
from cluster_iac.plan.slurm import real_memory_mib
from tests.conftest import example_build
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import example_data


def MIG_PROFILES() -> dict[str, dict[str, object]]:  # noqa: N802
    """Every built-in GPU with MIG, and its profiles."""
    return {key: table for key, gpu in builtin_catalog().gpus.items()
            if (table := mig_profiles(gpu)) is not None}


H100 = mig_profiles(builtin_catalog().gpus["h100-sxm5-80gb"]) or {}
# the guide's "Supported MIG Profiles" tables: instances of each profile at most
GUIDE_MAX = {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1,
             "7g.80gb": 1}


@pytest.mark.parametrize("profile,most", sorted(GUIDE_MAX.items()))
def test_the_slice_grid_gives_the_guides_instance_counts(profile: str, most: int) -> None:
    assert place([H100[profile]] * most) is not None
    assert place([H100[profile]] * (most + 1)) is None


@pytest.mark.parametrize("layout,fits", [
    (["4g.40gb", "3g.40gb"], True),
    (["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], True),   # needs 2g at 0 and 3g at 4
    (["2g.20gb", "2g.20gb", "2g.20gb", "1g.10gb"], True),
    (["1g.20gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"], True),
    (["4g.40gb", "4g.40gb"], False),
    (["3g.40gb", "3g.40gb", "1g.10gb"], False),              # 9 memory slices
    (["4g.40gb", "2g.20gb", "2g.20gb"], False),               # 8 compute slices
])
def test_layouts_fit_as_the_guide_says(layout: list[str], fits: bool) -> None:
    starts = place([H100[p] for p in layout])
    assert (starts is not None) == fits
    if starts is not None:  # no two instances share a memory slice
        used = [s for p, start in zip(layout, starts, strict=True)
                for s in range(start, start + H100[p].memory)]
        assert len(used) == len(set(used)) and max(used) < 8


# `nvidia-smi mig -lgi` after `nvidia-smi mig -cgi 19,19,19,19,19,19,19 -C` on an
# "NVIDIA H100 80GB HBM3" (a public transcript; the driver reported creating GPU instance ids
# 13, 11, 12, 7, 8, 9, 10 in that order):
H100_7X1G = """\
|   0  MIG 1g.10gb         19        7          0:1     |
|   0  MIG 1g.10gb         19        8          1:1     |
|   0  MIG 1g.10gb         19        9          2:1     |
|   0  MIG 1g.10gb         19       10          3:1     |
|   0  MIG 1g.10gb         19       11          4:1     |
|   0  MIG 1g.10gb         19       12          5:1     |
|   0  MIG 1g.10gb         19       13          6:1     |
"""
# (profiles in -cgi order, the ids the driver printed as it created them, their starts): the
# MIG User Guide's "Getting Started with MIG" examples (A100 40GB, whose 1g/2g/3g/4g are
# 1g.5gb/2g.10gb/3g.20gb/4g.20gb on the same slice grid), the transcript above, and an
# A100 40GB on driver 570 (`-cgi 19 -C`, then `-cgi 9 -C`: 1g.5gb id 13 at 6:1, 3g id 1 at 0:4)
CREATED = [
    (["3g", "1g", "2g", "1g"], [2, 7, 4, 8], [4, 0, 2, 1]),
    (["2g", "1g", "1g", "1g", "1g", "1g"], [5, 13, 7, 8, 9, 10], [4, 6, 0, 1, 2, 3]),
    (["1g", "2g", "4g"], [13, 5, 1], [6, 4, 0]),
    (["1g"] * 7, [13, 11, 12, 7, 8, 9, 10], [6, 4, 5, 0, 1, 2, 3]),
    (["1g", "3g"], [13, 1], [6, 0]),
]


def _lgi_rows(text: str) -> list[tuple[str, int, int, int]]:
    """(profile, GPU instance id, start, size) of each row of `nvidia-smi mig -lgi`."""
    rows = []
    for line in text.splitlines():
        cells = line.strip("| ").split()
        start, size = cells[5].split(":")
        rows.append((cells[2], int(cells[4]), int(start), int(size)))
    return rows


def test_instance_ids_are_the_drivers() -> None:
    rows = _lgi_rows(H100_7X1G)
    assert [gpu_instance_id(size, start) for _, _, start, size in rows] == [
        gi for _, gi, _, _ in rows] == list(range(7, 14))
    # the whole GPU 0, a 3g at 4:4 id 2, at 0:4 id 1, a 2g at 2:2 id 4, at 4:2 id 5
    assert [gpu_instance_id(m, s) for m, s in ((8, 0), (4, 4), (4, 0), (2, 2), (2, 4))] == [
        0, 2, 1, 4, 5]


@pytest.mark.parametrize("sizes,ids,starts", CREATED)
def test_the_driver_places_instances_as_the_transcripts_show(
        sizes: list[str], ids: list[int], starts: list[int]) -> None:
    by_size = {p.split("g.")[0] + "g": H100[p] for p in ("1g.10gb", "2g.20gb", "3g.40gb",
                                                        "4g.40gb")}
    profiles = [by_size[s] for s in sizes]
    used: list[tuple[int, int]] = []
    got = []
    for profile in profiles:
        start = driver_start(profile, used, 7 - sum(by_size[s].compute for s in sizes[:len(got)]))
        assert start is not None
        used.append((start, profile.memory))
        got.append(start)
    assert got == starts
    assert [gpu_instance_id(p.memory, s) for p, s in zip(profiles, got, strict=True)] == ids


def test_capability_minors() -> None:
    # Slurm's gres.conf MIG example: gpu0/gi2 -> nvidia-cap21, its ci0 -> nvidia-cap22
    assert (cap_minor(0, 2), cap_minor(0, 2, 0)) == (21, 22)
    assert cap_minor(1, 0) == 3 + 135  # GPU 1 starts after GPU 0's 15 x 9 minors


def test_every_profile_name_says_its_memory() -> None:
    for gpu, table in MIG_PROFILES().items():
        memory = builtin_catalog().gpus[gpu].memory_gib
        for name, profile in table.items():
            assert name == f"{profile.compute}g.{profile.memory_gb}gb"
            # memory per instance: about its share of 8 slices (the names round down)
            assert profile.memory_gb <= memory * profile.memory / 8 + 1


def test_the_example_gres_and_slurm_conf() -> None:
    build = example_build("hgx-h200")
    nt = build.plan.node_types["h200-mig"]
    gres = [ln for ln in build.files["slurm/gres.conf"].splitlines() if "h200-mig1" in ln]
    assert len(gres) == 44 and all("MultipleFiles=/dev/nvidia" in ln for ln in gres)
    assert all(ln.endswith(("Cores=0-55", "Cores=56-111")) for ln in gres)
    line = next(ln for ln in build.files["slurm/slurm.conf"].splitlines()
                if ln.startswith("NodeName=h200-mig1 "))
    assert "Gres=gpu:h200_1g.18gb:36,gpu:h200_2g.35gb:4,gpu:h200_3g.71gb:4 " in line
    part = next(ln for ln in build.files["slurm/slurm.conf"].splitlines()
                if ln.startswith("PartitionName=mig "))
    memory = real_memory_mib(build.plan.settings.slurm, nt.memory_gib)
    assert f"DefMemPerGPU={memory // 44} " in part and f"DefCpuPerGPU={224 // 44} " in part


def test_the_mig_parted_file_is_the_layout() -> None:
    text = example_build("hgx-h200").files["mig/h200-mig.yaml"]
    data = YAML(typ="safe", pure=True).load(text)
    assert data == {"version": "v1", "mig-configs": {"h200-mig": [
        {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.18gb": 7}},
        {"devices": [4, 5, 6, 7], "mig-enabled": True,
         "mig-devices": {"3g.71gb": 1, "2g.35gb": 1, "1g.18gb": 2}}]}}
    assert "mig/h200.yaml" not in example_build("hgx-h200").files


def test_mig_nodes_get_no_nvlink_busbw_prediction() -> None:
    plan = example_build("hgx-h200").plan
    parts = {p.name: p for p in plan.partitions}
    assert partition_predictions(plan, parts["mig"]) == []
    assert partition_predictions(plan, parts["gpu"])


def test_the_health_check_compares_the_instances() -> None:
    script = example_build("hgx-h200").files["slurm/healthcheck/h200-mig.sh"]
    expected = next(ln for ln in script.splitlines() if ln.startswith("mig_expected="))
    assert len(expected.split()) == 44 and "0:7:1g.18gb" in expected
    assert "0:13:1g.18gb" in expected and "0:14:" not in expected  # 1g at 0:1-6:1: ids 7-13
    # GPU 4's 3g.71gb + 2g.35gb + 2 x 1g.18gb, made largest first: 3g at 4:4 (id 2), 2g at
    # 0:2 (id 3), 1g at 2:1 and 3:1 (ids 9 and 10)
    assert {"4:2:3g.71gb", "4:3:2g.35gb", "4:9:1g.18gb", "4:10:1g.18gb"} <= set(
        expected.strip("'").replace("mig_expected='", "").split())
    assert "nvidia-smi mig -lgi" not in example_build("hgx-h200").files[
        "slurm/healthcheck/h200.sh"]


def _codes(data: dict[str, typing.Any]) -> list[tuple[str, tuple[object, ...], str | None]]:
    with pytest.raises(CompileError) as info:
        compile_data(data)
    return [(d.code, d.path, d.hint) for d in info.value.diagnostics]


def _mig(layouts: list[dict[str, typing.Any]], platform: str = "hgx-h200-8gpu"
         ) -> dict[str, typing.Any]:
    data = example_data("hgx-h200")
    data["node_types"]["h200-mig"] = {"platform": platform, "mig": layouts}
    return data


def test_a_profile_the_gpu_lacks_is_located_with_the_nearest() -> None:
    [(code, path, hint)] = _codes(_mig([{"profiles": ["3g.71gb", "1g.10gb"]}]))
    assert (code, path) == ("SPEC-MIG-PROFILE", ("node_types", "h200-mig", "mig", 0,
                                                 "profiles", 1))
    assert hint == "did you mean '1g.18gb'?"


def test_a_layout_that_does_not_fit_is_located() -> None:
    [(code, path, _hint)] = _codes(_mig([{"profiles": ["4g.71gb", "4g.71gb"]}]))
    assert (code, path) == ("SPEC-MIG-FIT", ("node_types", "h200-mig", "mig", 0, "profiles"))


def test_gpu_indices_and_gpus_without_mig_are_located() -> None:
    codes = _codes(_mig([{"gpus": [0, 8], "profiles": ["7g.141gb"]},
                         {"gpus": [0], "profiles": ["7g.141gb"]}]))
    assert [(c, p) for c, p, _ in codes] == [
        ("SPEC-MIG-GPU", ("node_types", "h200-mig", "mig", 0, "gpus", 1)),
        ("SPEC-MIG-GPU", ("node_types", "h200-mig", "mig", 1, "gpus", 0))]
    data = _mig([{"profiles": ["7g.186gb"]}], platform="gb200-nvl72-tray")
    assert _codes(data)[0][:2] == ("SPEC-MIG-GPU", ("node_types", "h200-mig", "mig"))


def test_mig_with_nvml_autodetect_is_refused_where_slurmd_names_it_from_its_memory() -> None:
    data = _mig([{"profiles": ["7g.141gb"]}])
    data["node_types"]["h200-mig"]["gres_autodetect"] = "nvml"
    data["cluster"]["slurm_version"] = "22.05"
    assert [c[:2] for c in _codes(data)] == [
        ("SPEC-MIG-AUTODETECT", ("node_types", "h200-mig", "gres_autodetect"))]
