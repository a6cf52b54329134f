"""Which scripts `tapir test` runs: paths and globs, header tags and skips, tag filters, shards;
and the device slots it runs them on (shared with `tapir eval`)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tapir.core.errors import UsageError
from tapir.runner.collect import Header, collect, read_header, select, split_tags
from tapir.runner.pool import DevicePool, Slot, plan_slots


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_header_gives_tags_and_a_skip_reason() -> None:
    source = ("# doc: music.yaml\n\n# Tags: Smoke, music  nightly\n# tags: smoke\n"
              "# skip: the sort dialog is being redesigned\n$a.tap()\n# tags: late\n")
    assert read_header(source) == Header(("smoke", "music", "nightly"), "the sort dialog is being redesigned")
    # only the leading comments are the header: a docstring or code ends it
    assert read_header('"""doc"""\n# tags: x\n').tags == ()
    assert read_header("# skip:\n").skip == "skipped by its header"
    assert read_header("").tags == () and read_header("").skip is None


def test_collect_takes_files_folders_and_globs_in_order_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    _tree(tmp_path, {"a/one.tap": "", "a/two.tap": "", "a/generated/g.tap": "", "b/three.tap": "",
                     "b/deep/four_smoke.tap": "", "notes.txt": ""})
    monkeypatch.chdir(tmp_path)
    assert collect(["b", "a"]) == [Path("b/deep/four_smoke.tap"), Path("b/three.tap"), Path("a/one.tap"),
                                   Path("a/two.tap")]
    assert collect(["**/*_smoke.tap", "b/three.tap", "b"]) == [Path("b/deep/four_smoke.tap"), Path("b/three.tap")]
    with pytest.raises(UsageError, match="no such file or folder: nope"):
        collect(["nope"])
    with pytest.raises(UsageError, match=r"not a test script \(\*.tap\): notes.txt"):
        collect(["notes.txt"])
    with pytest.raises(UsageError, match="no test scripts .* match c/\\*.tap"):
        collect(["c/*.tap"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no test scripts"):
        collect(["empty"])


def _scripts(n: int) -> list[Path]:
    return [Path(f"s{i:02d}.tap") for i in range(n)]


def test_include_and_exclude_take_tags_and_patterns_exclude_winning() -> None:
    a, b, c, d = _scripts(4)
    headers = {a: Header(("smoke", "music")), b: Header(("music", "slow")), c: Header(("notes",)), d: Header()}
    assert select([a, b, c, d], headers=headers, include=["smoke"]).scripts == [a]
    assert select([a, b, c, d], headers=headers, include=["MUS*"]).scripts == [a, b]
    chosen = select([a, b, c, d], headers=headers, include=["music"], exclude=["slow"])
    assert chosen.scripts == [a] and chosen.deselected == [b, c, d]
    assert select([a, b, c, d], headers=headers, exclude=["slow", "notes"]).scripts == [a, d]
    assert split_tags(["smoke,music", " slow ", "a b"]) == ["smoke", "music", "slow", "a", "b"]


@pytest.mark.parametrize("total", [1, 2, 3, 7, 25])
def test_shards_run_every_script_once_and_differ_in_size_by_one_at_most(total: int) -> None:
    scripts = _scripts(20)
    shards = [select(scripts, headers={}, shard=(i, total)).scripts for i in range(total)]
    flat = [s for shard in shards for s in shard]
    assert sorted(flat) == scripts and len(flat) == len(set(flat))
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    # the same shard, the same scripts, whatever the run
    assert shards == [select(scripts, headers={}, shard=(i, total)).scripts for i in range(total)]
    for i in range(total):
        other = select(scripts, headers={}, shard=(i, total)).other_shards
        assert sorted(other + shards[i]) == scripts


def test_shards_split_what_the_tags_selected() -> None:
    scripts = _scripts(6)
    headers = {s: Header(("smoke",) if i % 2 == 0 else ()) for i, s in enumerate(scripts)}
    first = select(scripts, headers=headers, include=["smoke"], shard=(0, 2))
    second = select(scripts, headers=headers, include=["smoke"], shard=(1, 2))
    assert first.scripts == [scripts[0], scripts[4]] and second.scripts == [scripts[2]]
    assert len(first.deselected) == 3 and first.other_shards == [scripts[2]]


def test_a_shard_index_out_of_range_says_shards_count_from_zero() -> None:
    with pytest.raises(UsageError, match="from 0 to 2") as err:
        select(_scripts(3), headers={}, shard=(3, 3))
    assert "counted from 0" in (err.value.hint or "")
    with pytest.raises(UsageError, match="at least 1"):
        select(_scripts(3), headers={}, shard=(0, 0))


def test_slots_are_simulators_then_one_per_phone() -> None:
    assert plan_slots([], 1) == [("sim#1", "sim")]
    assert plan_slots(["sim"], 3) == [("sim#1", "sim"), ("sim#2", "sim"), ("sim#3", "sim")]
    assert plan_slots(["sim:music", "sim:notes"], 1) == [("sim#1", "sim:music"), ("sim#2", "sim:notes")]
    assert plan_slots(["emulator-5554", "sim", "emulator-5554", "R58M"], 2) == [
        ("sim#1", "sim"), ("sim#2", "sim"), ("emulator-5554", "emulator-5554"), ("R58M", "R58M")]
    assert plan_slots(["emulator-5554"], 4) == [("emulator-5554", "emulator-5554")]
    assert Slot("sim#1", "sim:music", 5037).is_sim and not Slot("R58M", "R58M").is_sim


def test_the_pool_runs_jobs_at_once_on_free_slots_and_keeps_the_items_order() -> None:
    both_busy = threading.Barrier(2, timeout=5)
    seen: list[str] = []

    def job(item: int, slot: Slot) -> tuple[int, str]:
        if item < 2:
            both_busy.wait()  # the first two jobs run at the same time, one per phone
        seen.append(slot.name)
        return item, slot.name

    with DevicePool(["phone-a", "phone-b"]) as pool:  # phones: no adb server is started
        run = pool.run(list(range(6)), job)
    assert [i for i, _ in run.results] == list(range(6)) and not run.not_run and not run.interrupted
    assert {name for _, name in run.results[:2]} == {"phone-a", "phone-b"}
    assert set(seen) == {"phone-a", "phone-b"}


def test_a_crashing_job_is_a_result_and_ctrl_c_keeps_what_finished() -> None:
    def job(item: int, slot: Slot) -> str:
        if item == 1:
            raise ValueError("a bug")
        if item == 3:
            raise KeyboardInterrupt
        return f"ok {item}"

    with DevicePool(["phone"]) as pool:
        run = pool.run([0, 1, 2, 3, 4, 5], job,
                       on_crash=lambda item, slot, tb: f"crashed {item}: {tb.splitlines()[-1]}")
    assert run.interrupted
    assert run.results[:3] == ["ok 0", "crashed 1: ValueError: a bug", "ok 2"]
    # the worker may have started more before the main thread saw Ctrl-C; nothing is lost or counted twice
    assert 3 in run.not_run and len(run.results) + len(run.not_run) == 6
