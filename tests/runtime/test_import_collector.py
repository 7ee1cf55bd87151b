"""`import ember` pauses the cyclic garbage collector while it runs and then freezes what
it made (runtime/startup.py): the collector runs afterwards as the program had it, and an
import that fails leaves it running and freezes nothing."""

import subprocess
import sys


def _run(code: str) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True).stdout.split()


def test_the_import_freezes_its_objects_and_the_collector_runs_on():
    out = _run("import gc\nimport ember as em\n"
               "print(gc.isenabled(), gc.get_freeze_count() > 10000)\n"
               "class Node:\n    pass\n"
               "a, b = Node(), Node()\na.other, b.other = b, a\ndel a, b\n"
               "print(gc.collect() >= 2)\n"
               "print((em.constant([1.0]) * 2).numpy().tolist() == [2.0])\n")
    assert out == ["True", "True", "True", "True"]


def test_a_program_that_turned_the_collector_off_keeps_it_off():
    assert _run("import gc\ngc.disable()\nimport ember\nprint(gc.isenabled())") == ["False"]


def test_a_failed_import_leaves_the_collector_running_and_freezes_nothing():
    out = _run("import gc, sys\n"
               "sys.modules['ember.frontend.ensure_shape'] = None  # its import fails\n"
               "try:\n    import ember\nexcept ImportError:\n    print('failed')\n"
               "print(gc.isenabled(), gc.get_freeze_count())\n")
    assert out == ["failed", "True", "0"]
