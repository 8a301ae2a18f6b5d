"""MIG: the catalog's profiles and slice grid against NVIDIA's MIG user guide, the spec's layouts
(located errors), gres.conf and slurm.conf GRES, mig-parted YAML, per-GPU defaults, busbw and the
health check. tests/real/test_mig_real.py has slurmd 22.05, 24.11 and 26.05 read the GRES."""

from __future__ import annotations

import typing

import pytest
from ruamel.yaml import YAML

from cluster_iac.base.errors import CompileError
from cluster_iac.catalog import builtin_catalog
from cluster_iac.catalog.mig import cap_minor, gpu_instance_id, mig_profiles, place
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


def test_instance_ids_and_capability_minors() -> None:
    # the guide: two 3g instances, at 4:4 id 1 and at 0:4 id 2; the whole GPU id 0
    assert (gpu_instance_id(4, 4), gpu_instance_id(4, 0), gpu_instance_id(8, 0)) == (1, 2, 0)
    assert sorted(gpu_instance_id(1, s) for s in range(7)) == list(range(8, 15))
    # Slurm's gres.conf MIG example: gpu0/gi2 -> nvidia-cap21, its ci0 -> nvidia-cap22
    assert (cap_minor(0, 2), cap_minor(0, 2, 0)) == (21, 22)
    assert cap_minor(1, 0) == 3 + 135  # GPU 1 starts after GPU 0's 15 x 9 minors


def test_every_profile_name_says_its_memory() -> None:
    for gpu, table in MIG_PROFILES().items():
        memory = {"a100-sxm4-80gb": 80, "h100-sxm5-80gb": 80, "h200-sxm-141gb": 141,
                  "b200-sxm-180gb": 180}[gpu]
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
    assert len(expected.split()) == 44 and "0:14:1g.18gb" in expected
    assert "4:1:3g.71gb" in expected  # the 3g at slices 4-7 on GPU 4
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


def test_mig_with_nvml_autodetect_is_refused() -> None:
    data = _mig([{"profiles": ["7g.141gb"]}])
    data["node_types"]["h200-mig"]["gres_autodetect"] = "nvml"
    assert [c[:2] for c in _codes(data)] == [
        ("SPEC-MIG-AUTODETECT", ("node_types", "h200-mig", "gres_autodetect"))]
