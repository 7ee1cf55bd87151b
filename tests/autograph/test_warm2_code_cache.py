"""AutoGraph's converted code on disk (frontend/autograph/code_cache.py): a second process
loads it instead of converting, and any change to the source converts anew."""

import os
import subprocess
import sys
import time

PROGRAM = '''import ember as em
from ember.frontend.autograph import conversion

@em.function
def f(x):
    for _ in range(3):
        x = em.tanh(x) * SCALE + 0.1
    return x

if FORBID:
    def _refuse(fn, code):
        raise AssertionError("converted again")
    conversion._compiled = _refuse
print(f(em.constant([1.0, 2.0])).numpy().tolist())
'''


def _write(path, scale: str, age_s: float = 60) -> None:
    path.write_text(PROGRAM.replace("SCALE", scale))
    past = time.time() - age_s  # older than the racy window: its stats are trusted
    os.utime(path, (past, past))


def _run(path, cache, forbid: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "EMBER_CACHE_DIR": str(cache)}
    code = f"FORBID = {forbid}\nexec(compile(open({str(path)!r}).read(), {str(path)!r}, 'exec'))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


def _entries(cache) -> list:
    return sorted(p for p in (cache / "autograph").rglob("*.code"))


def test_a_second_process_loads_the_converted_code(tmp_path):
    script, cache = tmp_path / "prog.py", tmp_path / "cache"
    _write(script, "0.5")
    first = _run(script, cache, forbid=False)
    assert first.returncode == 0, first.stderr
    assert len(_entries(cache)) == 1
    second = _run(script, cache, forbid=True)  # would fail if it converted
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


def test_an_edited_source_is_converted_again(tmp_path):
    script, cache = tmp_path / "prog.py", tmp_path / "cache"
    _write(script, "0.5")
    before = _run(script, cache, forbid=False)
    _write(script, "0.25", age_s=30)  # new contents, new stats
    assert _run(script, cache, forbid=True).returncode != 0  # no entry for the new source
    after = _run(script, cache, forbid=False)
    assert after.returncode == 0, after.stderr
    assert after.stdout != before.stdout and len(_entries(cache)) == 2


def test_a_fresh_file_or_a_damaged_entry_is_converted(tmp_path):
    script, cache = tmp_path / "prog.py", tmp_path / "cache"
    _write(script, "0.5", age_s=0)  # just written: its stats are not trusted
    assert _run(script, cache, forbid=False).returncode == 0
    assert not (cache / "autograph").exists()
    _write(script, "0.5")
    good = _run(script, cache, forbid=False)
    (entry,) = _entries(cache)
    entry.write_bytes(entry.read_bytes()[:-7] + b"garbage")
    assert _run(script, cache, forbid=True).returncode != 0  # checksum fails: converts
    again = _run(script, cache, forbid=False)
    assert again.stdout == good.stdout
    assert _run(script, cache, forbid=True).returncode == 0  # rewritten


def test_an_edit_that_keeps_size_and_mtime_is_converted_again(tmp_path):
    """`cp -p`, an archive's extraction: same size, the old mtime put back. The change of
    the file's ctime keys a new entry."""
    script, cache = tmp_path / "prog.py", tmp_path / "cache"
    past = time.time() - 60
    _write(script, "0.5")
    os.utime(script, (past, past))
    before = _run(script, cache, forbid=False)
    time.sleep(0.05)  # a ctime of its own
    script.write_text(PROGRAM.replace("SCALE", "0.7"))
    os.utime(script, (past, past))
    assert _run(script, cache, forbid=True).returncode != 0  # no entry for the new source
    after = _run(script, cache, forbid=False)
    assert after.returncode == 0, after.stderr
    assert after.stdout != before.stdout


def test_the_converters_fingerprint_is_taken_as_they_are_imported(tmp_path):
    """It describes the converters in memory: a converter edited between `import ember`
    and the first conversion cannot have the old code's output stored under its new stats."""
    probe = ("import ember\nfrom ember.frontend.autograph import code_cache\n"
             "print(code_cache._converters.cache_info().currsize)")
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1"]
