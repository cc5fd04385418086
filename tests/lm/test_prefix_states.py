"""Evaluated prompt prefixes kept on disk (binder_py/lm/prefix_states.py), with a fake runtime."""

from __future__ import annotations

import os
import time

from binder_py.lm.prefix_states import PrefixStates, prefix_key

PREFIX = (("system", "instruction"), ("user", "exemplar question"), ("assistant", "exemplar program"))


def request(last: str):
    return (*PREFIX, ("user", last))


class FakeRuntime:
    """Slot actions and warm-ups recorded; a save writes the file, a restore reads it."""

    def __init__(self, directory, fail_restore=False):
        self.directory, self.fail_restore = directory, fail_restore
        self.actions, self.warmed = [], []

    def slot_action(self, slot, action, filename):
        self.actions.append((slot, action, filename))
        if action == "save":
            (self.directory / filename).write_bytes(b"state")
            return True
        return not self.fail_restore and (self.directory / filename).is_file()

    def warm(self, prefix, slot):
        self.warmed.append((slot, prefix))
        return {"prompt_n": 40}


def later_process(directory, **kwargs):
    """A process started after every file now in ``directory`` was written."""
    for path in [*directory.glob("*.seen"), *directory.glob("*.state")]:
        os.utime(path, (time.time() - 60, time.time() - 60))
    return PrefixStates(directory, 4, **kwargs)


def test_a_prefix_is_noted_then_saved_by_a_later_process_then_restored(tmp_path):
    key = prefix_key(request("q1"))
    assert key == prefix_key(request("another question")) and key != prefix_key((("system", "x"), *PREFIX[1:], ("user", "q")))
    first, runtime = PrefixStates(tmp_path, 4), FakeRuntime(tmp_path)
    assert first.place(request("q1"), runtime.slot_action, runtime.warm) == (None, {})
    assert first.place(request("q2"), runtime.slot_action, runtime.warm) == (None, {})  # seen in this process only
    assert (tmp_path / f"{key}.seen").is_file() and not list(tmp_path.glob("*.state"))
    assert runtime.actions == [] and runtime.warmed == []

    second = later_process(tmp_path)
    assert second.place(request("q3"), runtime.slot_action, runtime.warm) == (0, {"prompt_n": 40})
    assert runtime.warmed == [(0, [{"role": r, "content": c} for r, c in PREFIX])]  # the prefix alone
    assert runtime.actions[0][:2] == (0, "save") and (tmp_path / f"{key}.state").is_file()
    assert not list(tmp_path.glob("*.tmp")) and second.saved == 1
    assert second.place(request("q4"), runtime.slot_action, runtime.warm) == (None, {})  # in a slot already

    third = later_process(tmp_path)
    runtime.actions.clear(), runtime.warmed.clear()
    assert third.place(request("q5"), runtime.slot_action, runtime.warm) == (0, {})
    assert runtime.actions == [(0, "restore", f"{key}.state")] and runtime.warmed == [] and third.restored == 1


def test_a_state_that_does_not_restore_is_deleted_and_short_requests_are_left_alone(tmp_path):
    key = prefix_key(request("q"))
    (tmp_path / f"{key}.state").write_bytes(b"from another build")
    states, runtime = PrefixStates(tmp_path, 4), FakeRuntime(tmp_path, fail_restore=True)
    assert states.place(request("q"), runtime.slot_action, runtime.warm) == (None, {})
    assert not (tmp_path / f"{key}.state").exists()
    assert states.place((("system", "s"), ("user", "q")), runtime.slot_action, runtime.warm) == (None, {})
    assert prefix_key((("system", "s"), ("user", "q"))) is None


def test_prefixes_go_round_the_slots_and_only_the_most_recent_states_are_kept(tmp_path):
    runtime = FakeRuntime(tmp_path)
    prefixes = [(("system", f"instruction {i}"), *PREFIX[1:]) for i in range(5)]
    for prefix in prefixes:
        PrefixStates(tmp_path, 3).place((*prefix, ("user", "q")), runtime.slot_action, runtime.warm)
    states = later_process(tmp_path, max_states=3)
    slots = [states.place((*prefix, ("user", "q")), runtime.slot_action, runtime.warm)[0] for prefix in prefixes]
    assert slots == [0, 1, 2, 3, 0]
    assert len(list(tmp_path.glob("*.state"))) == 3


def test_a_save_that_fails_leaves_no_file_and_old_leftovers_are_removed(tmp_path):
    class FullDisk(FakeRuntime):
        def slot_action(self, slot, action, filename):
            if action == "save":
                (self.directory / filename).write_bytes(b"half")
                return False
            return super().slot_action(slot, action, filename)

    PrefixStates(tmp_path, 2).place(request("q"), FullDisk(tmp_path).slot_action, FullDisk(tmp_path).warm)
    runtime = FullDisk(tmp_path)
    assert later_process(tmp_path).place(request("q"), runtime.slot_action, runtime.warm)[0] == 0
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.state"))
    leftover = tmp_path / "abc.99.tmp"
    leftover.write_bytes(b"x")
    os.utime(leftover, (time.time() - 7200, time.time() - 7200))
    other = (("system", "other"), *PREFIX[1:], ("user", "q"))
    PrefixStates(tmp_path, 2).place(other, FakeRuntime(tmp_path).slot_action, FakeRuntime(tmp_path).warm)
    fine = FakeRuntime(tmp_path)
    later_process(tmp_path).place(other, fine.slot_action, fine.warm)
    assert not leftover.exists() and len(list(tmp_path.glob("*.state"))) == 1
