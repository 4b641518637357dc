"""The documentation site builds strictly, and its pages hold what they must in a real browser.

The site (Sphinx + MyST-Parser + numpydoc, ``docs/conf.py``) is built once per session into a temporary
folder with ``-W --keep-going -n``: a warning of any kind fails the build, so a broken link, a page
missing from a toctree, a reference to nothing or a docstring that does not render fails here. The
home page (the README) and the top level's API page are then rendered in headless Chromium with every
host name unresolvable (the pages must not need the network; MathJax, fetched from a CDN, then leaves
the formulas as TeX in their math blocks) and read back from the DOM.
"""

import importlib
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import apipages  # noqa: E402  (docs/_ext: the directive that writes the API pages)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``sphinx-build -W --keep-going -n`` of ``docs/`` into a fresh folder: (output folder, log)."""
    out = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
           "-d", str(out / ".doctrees"), str(DOCS), str(out / "html")]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    return out / "html", run


def _text(html):
    """The visible text of an HTML page, tags dropped and white space collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_site_builds_with_no_warning(site):
    out, run = site
    assert run.returncode == 0, ("sphinx-build -W --keep-going -n failed (every warning is an error):\n"
                                 + run.stdout[-4000:] + run.stderr[-6000:])
    assert run.stderr.strip() == "", run.stderr[-4000:]
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    commands = ["demo", "paper", "engines", "quality", "validate", "scale", "bench", "long-lists"]
    must = {"index.html", "user-guide.html", "math.html", "ndcg-differences.html", "heatmap.html",
            "development.html", "api.html", "reproducing/index.html", *(f"reproducing/{c}.html" for c in commands)}
    assert must <= pages, sorted(must - pages)


def test_every_public_name_has_an_entry_on_its_api_page(site):
    """Each API page is generated from its namespace's ``__all__``: no name may be missing."""
    out, run = site
    assert run.returncode == 0, run.stderr[-4000:]
    namespaces = apipages.api_namespaces(DOCS)
    assert {"lambda_objectives", "reference"} <= set(namespaces)
    for ns in namespaces:
        html = (out / "api" / f"{ns}.html").read_text(encoding="utf-8")
        module = importlib.import_module(ns)
        missing = [n for n in apipages.public_names(module) if f'id="{ns}.{n}"' not in html]
        assert not missing, f"api/{ns}.html has no entry for {missing}"


def _chromium_dom(page, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium): the site's pages "
                    "were built strictly but not checked in a browser")
    # no host name resolves: a page that needs the network shows it here, not on a user's machine
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=1100,900", page.as_uri()],
                   capture_output=True, timeout=120)
    import matplotlib.image as mpimg

    assert mpimg.imread(shot).std() > 0.01  # something was drawn, not a blank page
    return dom.stdout


def test_home_page_in_chromium(site, tmp_path):
    out, run = site
    assert run.returncode == 0, run.stderr[-4000:]
    dom = _chromium_dom(out / "index.html", tmp_path)
    text = _text(dom)
    assert re.search(r"<h1>lambda_objectives<a class=\"headerlink\"", dom)          # the README's title
    assert "<title>lambda_objectives" in dom
    for must in ("Two commands", "python3 dev.py demo", "python3 dev.py test",
                 "Quick start: LightGBM", "Quick start: XGBoost", "What you get, engine by engine", "Measured",
                 "Where to go next"):
        assert must in text, must
    # the quick starts as highlighted code, and the README's links rewritten to the site's pages
    assert "LightGBMObjective" in text and "XGBoostObjective" in text
    assert 'class="highlight-python' in dom
    assert 'href="reproducing/quality.html"' in dom and 'href="user-guide.html"' in dom
    assert 'action="search.html"' in dom  # the search box


def test_api_page_in_chromium(site, tmp_path):
    out, run = site
    assert run.returncode == 0, run.stderr[-4000:]
    dom = _chromium_dom(out / "api" / "lambda_objectives.html", tmp_path)
    entry = re.search(r'<dt class="sig sig-object py" id="lambda_objectives\.lambda_gradients">(.*?)</dt>'
                      r'(.*?)(?=<dt class="sig sig-object py" id=)', dom, re.S)
    assert entry, "no lambda_gradients entry on the API page"
    signature, body = _text(entry.group(1)), entry.group(2)
    compact = re.sub(r"\s*([().,=*])\s*", r"\1", signature)  # the text split at the signature's tags
    assert "lambda_objectives.lambda_gradients(scores,labels,group_ptr,metric='ndcg'" in compact, signature
    # the numpydoc sections rendered as sections, not as text
    assert re.search(r'<dt class="field-\w+">Parameters', body) and "Returns" in _text(body)
    # the docstring's ``.. math::`` block is a display-math block holding the TeX, not literal text
    maths = [_text(m) for m in re.findall(r'<div class="math[^"]*">(.*?)</div>', body, re.S)]
    assert any(r"\sigma |\Delta Z_{ij}| \rho_{ij}" in m for m in maths), maths
    assert ".. math::" not in _text(body)
