"""The acceptance test of the pictures: the IR diff report of the digits MLP's training step
(examples/train_digits.py) opens in headless Chromium, whose screenshot shows every pass
name (read by Tesseract OCR) and whose DOM lists every pass; the MLP's graph SVG renders.

Marked `browser`: skipped without /usr/bin/chromium (apt-get install chromium); the OCR needs
the `tesseract` program (apt-get install tesseract-ocr), the SVG Graphviz (the `viz` extra
and apt-get install graphviz).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import ember as em

CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason=f"needs headless Chromium at {CHROMIUM} (apt-get install chromium)")]

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1"]
WINDOW = (1280, 800)  # the report's table of contents fits; a small page reads fast by OCR
# the passes of `ember-optimize`, spelt out so that the report has one row for each
PIPELINE = ("builtin.module(ember-inline,func.func(ember-canonicalize,ember-constant-fold),"
            "ember-cse,ember-licm,ember-dce,canonicalize,ember-shape-refine)")
PASSES = ["ember-inline", "ember-canonicalize", "ember-constant-fold", "ember-cse",
          "ember-licm", "ember-dce", "canonicalize", "ember-shape-refine"]
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def _chromium(tmp: pathlib.Path, url: str, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}",
                             f"--window-size={WINDOW[0]},{WINDOW[1]}", *args, url],
                            capture_output=True, timeout=180, text=True)
    assert result.returncode == 0, f"chromium failed:\n{result.stderr[-2000:]}"
    return result


def _screenshot(tmp: pathlib.Path, url: str, name: str) -> np.ndarray:
    png = tmp / name
    _chromium(tmp, url, f"--screenshot={png}")
    return read_png(png.read_bytes())


def read_png(data: bytes) -> np.ndarray:
    """The pixels (height, width, channels) of an 8-bit, non-interlaced RGB(A) or grey PNG,
    what Chromium writes (there is no image library in the test environment)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    assert depth == 8 and interlace == 0, f"unsupported PNG: depth {depth}, interlace"
    raw, stride = zlib.decompress(idat), 1 + width * channels
    rows, previous = [], bytes(width * channels)
    for y in range(height):
        kind, line = raw[y * stride], raw[y * stride + 1:(y + 1) * stride]
        previous = _unfilter(kind, line, previous, channels)
        rows.append(previous)
    return np.frombuffer(b"".join(rows), np.uint8).reshape(height, width, channels)


def _unfilter(kind: int, line: bytes, up: bytes, bpp: int) -> bytes:
    """One row of PNG filter `kind` undone, given the row above (`bpp` bytes per pixel)."""
    if kind == 0:
        return line
    if kind == 2:
        return ((np.frombuffer(line, np.uint8).astype(np.uint16)
                 + np.frombuffer(up, np.uint8)) & 0xFF).astype(np.uint8).tobytes()
    if kind == 1:
        pixels = np.frombuffer(line, np.uint8).reshape(-1, bpp).astype(np.int64)
        return (pixels.cumsum(axis=0) & 0xFF).astype(np.uint8).tobytes()
    out = bytearray(len(line))
    for i, value in enumerate(line):  # average and Paeth: each byte needs the one before
        a = out[i - bpp] if i >= bpp else 0
        b = up[i]
        if kind == 3:
            out[i] = (value + (a + b) // 2) & 0xFF
            continue
        c = up[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        out[i] = (value + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return bytes(out)


@pytest.fixture(scope="module")
def train_step():
    """The digits MLP and its training step, as examples/train_digits.py writes them."""
    spec = importlib.util.spec_from_file_location("train_digits_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    em.random.set_seed(0)
    model = example.mlp()
    model(np.zeros((1, 8, 8, 1), np.float32))
    loss_fn = em.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = em.optimizers.SGD(0.1)

    @em.function(pipeline=PIPELINE)
    def step(x, y):
        with em.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step.get_concrete_function(em.TensorSpec([32, 8, 8, 1], em.float32),
                                      em.TensorSpec([32], em.int32))


@pytest.fixture(scope="module")
def report(train_step, tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("report") / "mlp_report.html"
    train_step.ir_diff_report(str(path))
    return path


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_report_dom_in_chromium_lists_every_pass(report, tmp_path):
    dom = _chromium(tmp_path, report.as_uri(), "--dump-dom").stdout
    names = re.findall(r'<td class="name"><a href="#r0-p\d+">([^<]*)</a>', dom)
    assert names == PASSES
    assert "IR diff report: step" in dom
    assert re.search(r'<tr class="changed">', dom), "no pass changed the MLP's IR"


def test_report_screenshot_shows_every_pass_name(report, tmp_path):
    pixels = _screenshot(tmp_path, report.as_uri(), "report.png")
    assert pixels.shape[:2] == (WINDOW[1], WINDOW[0])
    assert pixels[..., :3].std() > 20, "the screenshot is blank"
    tesseract = shutil.which("tesseract")
    if tesseract is None:
        pytest.skip("reading the pass names off the screenshot needs the tesseract program "
                    "(apt-get install tesseract-ocr)")
    # --psm 6: one block of text, so each table row stays one line
    ocr = subprocess.run([tesseract, str(tmp_path / "report.png"), "stdout", "--psm", "6"],
                         capture_output=True, text=True, timeout=180,
                         env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    assert ocr.returncode == 0, ocr.stderr
    # each name in its row of the table of contents: after the row number (or at the start
    # of the line) and before what the pass ran on (the module or @step); the pipeline's
    # text, above the table, names them all too but cannot match this
    lines = [_normal(line) for line in ocr.stdout.splitlines()]
    missing = [name for name in PASSES if not any(
        re.search(rf"(^|\d){_normal(name)}(module|step)", line) for line in lines)]
    assert not missing, f"not in the screenshot's table: {missing}\n--- OCR ---\n{ocr.stdout}"


def test_mlp_graph_svg_renders_in_chromium(train_step, tmp_path):
    pytest.importorskip("graphviz", reason="the SVG needs the graphviz package "
                                           "(pip install 'ember[viz]')")
    if shutil.which("dot") is None:
        pytest.skip("the SVG needs Graphviz's dot program (apt-get install graphviz)")
    svg_text = train_step.graph.to_svg()
    svg = ET.fromstring(svg_text)
    texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"matmul", "relu", "ember.matmul", "ember.relu"} <= texts
    path = tmp_path / "mlp_graph.svg"
    path.write_text(svg_text, encoding="utf-8")
    assert "<svg" in _chromium(tmp_path, path.as_uri(), "--dump-dom").stdout
    # the whole picture, scaled to fit the window: it must fill the window's height or width
    page = tmp_path / "mlp_graph.html"
    page.write_text('<!DOCTYPE html><html><body style="margin:0"><img src="mlp_graph.svg" '
                    'style="max-width:100vw;max-height:100vh"></body></html>')
    pixels = _screenshot(tmp_path, page.as_uri(), "graph.png")
    ink = pixels[..., :3].min(axis=-1) < 250
    assert ink.mean() > 0.01, f"the SVG drew almost nothing ({ink.mean():.2%} of the pixels)"
    rows, cols = np.nonzero(ink)
    height, width = ink.shape
    assert np.ptp(rows) > 0.8 * height or np.ptp(cols) > 0.8 * width, "the SVG drew a small part"
