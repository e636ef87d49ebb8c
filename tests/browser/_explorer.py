"""Steps a reader takes in the browser explorers (shared by the exported-HTML and Lab tests).

Each step acts through the page (clicks, select boxes, text inputs) and waits for what a
person would see change; nothing here reads Python state.
"""

from __future__ import annotations

import re

TIMEOUT = 30_000


def page_text(root) -> str:
    return root.locator(".hnx-page").first.inner_text()


def list_ids(root) -> list[str]:
    """The first cell (case id) of every listed row."""
    return root.locator(".hnx-list tbody tr td:first-child").all_inner_texts()


def detail_text(root) -> str:
    return root.locator(".hnx-pane").first.inner_text()


def _wait_change(root, read, before, what: str) -> str:
    root.page.wait_for_function(
        "([el, sel, before]) => { const n = el.querySelector(sel);"
        " return n && n.innerText !== before; }",
        arg=[root.element_handle(), read, before],
        timeout=TIMEOUT,
    )
    return root.locator(read).first.inner_text()


def go_to_page(root, number: int) -> None:
    """Click "next" until the pager says page ``number``."""
    while not page_text(root).startswith(f"page {number} /"):
        before = page_text(root)
        root.locator("button", has_text="next").first.click()
        _wait_change(root, ".hnx-page", before, "page")


def select_row(root, index: int) -> str:
    """Click the ``index``-th listed case; return the detail pane's text once it changed."""
    before = detail_text(root)
    row = root.locator(".hnx-list tbody tr").nth(index)
    already = "hnx-selected" in (row.get_attribute("class") or "")
    row.click()
    root.page.wait_for_function(
        "(el) => el.classList.contains('hnx-selected')", arg=row.element_handle(), timeout=TIMEOUT
    )
    if not already and detail_text(root) == before:
        _wait_change(root, ".hnx-pane", before, "detail")
    return detail_text(root)


def choose(root, control: str, value: str, *, changes: bool = True) -> None:
    """Pick ``value`` in the select box ``control`` (and wait for the list to change)."""
    before = page_text(root) + "|" + "|".join(list_ids(root))
    root.locator(f'select[data-control="{control}"]').first.select_option(value)
    if changes:
        _wait_for_list(root, before)


def type_into(root, control: str, text: str) -> None:
    """Type ``text`` in the input ``control`` and commit it (Enter)."""
    before = page_text(root) + "|" + "|".join(list_ids(root))
    box = root.locator(f'input[data-control="{control}"]').first
    box.fill(text)
    box.press("Enter")
    _wait_for_list(root, before)


def _wait_for_list(root, before: str) -> None:
    root.page.wait_for_function(
        "([el, before]) => { const p = el.querySelector('.hnx-page');"
        " const ids = Array.from(el.querySelectorAll('.hnx-list tbody tr td:first-child'))"
        "   .map(td => td.innerText);"
        " return p && (p.innerText + '|' + ids.join('|')) !== before; }",
        arg=[root.element_handle(), before],
        timeout=TIMEOUT,
    )


def n_matching(root) -> int:
    """The "N of M case results" / "N cases" count of the pager."""
    match = re.search(r"· ([\d,]+) (?:of|cases)", page_text(root))
    assert match, page_text(root)
    return int(match.group(1).replace(",", ""))


def report_explorer_steps(root, screens, name: str) -> None:
    """Page 3, select a case (evidence + results show), filter by mode and score range."""
    root.scroll_into_view_if_needed()
    total = n_matching(root)
    go_to_page(root, 3)
    ids_page3 = list_ids(root)
    detail = select_row(root, 2)
    assert ids_page3[2] in detail.splitlines()[0]
    assert re.search(r"Expected evidence: \d+ of \d+ found", detail)
    assert "matched" in detail or "missing" in detail
    assert re.search(r"Retrieved results \(\d+, \d+ relevant\)", detail)
    root.screenshot(path=str(screens / f"{name}-page3-selected.png"))

    choose(root, "mode", "hybrid_search")
    by_mode = n_matching(root)
    assert 0 < by_mode < total and page_text(root).startswith("page 1 /")
    modes = root.locator(".hnx-list tbody tr td:nth-child(2)").all_inner_texts()
    assert modes and set(modes) == {"hybrid_search"}

    choose(root, "score", "beir_ndcg@10", changes=False)  # a score alone does not filter
    type_into(root, "max", "0.2")
    low = n_matching(root)
    assert 0 < low < by_mode
    values = [
        float(v) for v in root.locator(".hnx-list tbody tr td:nth-child(3)").all_inner_texts()
    ]
    assert values and max(values) <= 0.2
    root.screenshot(path=str(screens / f"{name}-filtered.png"))


def comparison_steps(root, screens, name: str) -> None:
    """Select a changed case: A and B show side by side with their evidence and results."""
    root.scroll_into_view_if_needed()
    ids = list_ids(root)
    assert ids
    detail = select_row(root, 1)
    assert ids[1] in detail.splitlines()[0]
    sides = root.locator(".hnx-side")
    assert sides.count() == 2
    a, b = sides.nth(0).inner_text(), sides.nth(1).inner_text()
    assert a.startswith("A: ") and b.startswith("B: ")
    for side in (a, b):
        assert "expected evidence" in side or "case missing" in side
    root.screenshot(path=str(screens / f"{name}-side-by-side.png"))
