"""Compare a generated document with a reference one (hand-written or upstream) on recorded screens.

On every recorded hierarchy of the app, both documents identify the screen and ground their
elements with the runtime's grounder, identifiers only (no fuzzy or embedding stage: this
measures the documents, not the fallbacks). Reported:

* **screens found**: reference screens that some recorded hierarchy shows, and the generated
  screen most often identified on those hierarchies;
* **elements covered**: reference elements that ground to a node on some hierarchy of their screen
  where an element of the generated screen identified there grounds to the same node (child
  elements are compared inside the first items of their list). Documents written by different
  hands often name the same control by different views (a settings row, or the checkbox in it):
  ``same_control`` also counts a generated node that contains, or sits in, the reference node
  when that subtree holds no other interactive view;
* **task steps covered** (``step_coverage``): for recorded task steps (a hierarchy and the node
  acted on), whether some element of a document grounds to that node, the clickable view around
  it, or a list item holding it.

    report = compare_documents(generated, reference, trees)
    print(report.render())
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tapir.core.document import AppDocument, Element
from tapir.core.errors import TapirError
from tapir.hierarchy import UINode, UITree
from tapir.runtime.grounding import Grounder, GroundingConfig

EXACT = GroundingConfig(use_fuzzy=False, use_embedding=False)
#: Items of a list whose children are compared.
ITEMS_COMPARED = 3


@dataclass
class DocumentComparison:
    reference_screens: int
    screens_found: list[str] = field(default_factory=list)
    screen_map: dict[str, str | None] = field(default_factory=dict)
    reference_elements: int = 0
    #: Reference elements that ground somewhere on the recorded hierarchies of their screen.
    elements_seen: list[str] = field(default_factory=list)
    elements_covered: list[str] = field(default_factory=list)
    generated_screens: int = 0
    generated_elements: int = 0
    #: reference element -> the generated elements that ground to the same node, most often first.
    covered_by: dict[str, list[str]] = field(default_factory=dict)
    #: Reference elements covered by the same node or the same control (see the module docstring).
    same_control: list[str] = field(default_factory=list)

    @property
    def share_same_control(self) -> float:
        return len(self.same_control) / len(self.elements_seen) if self.elements_seen else 0.0

    @property
    def share_covered(self) -> float:
        return len(self.elements_covered) / len(self.elements_seen) if self.elements_seen else 0.0

    @property
    def missed(self) -> list[str]:
        covered = set(self.elements_covered)
        return [e for e in self.elements_seen if e not in covered]

    def to_json(self) -> dict[str, object]:
        return {
            "reference_screens": self.reference_screens, "screens_found": len(self.screens_found),
            "screen_map": self.screen_map, "generated_screens": self.generated_screens,
            "reference_elements": self.reference_elements, "elements_seen": len(self.elements_seen),
            "elements_covered": len(self.elements_covered), "share_covered": round(self.share_covered, 3),
            "generated_elements": self.generated_elements, "same_control": len(self.same_control),
            "share_same_control": round(self.share_same_control, 3), "missed": self.missed,
        }

    def render(self) -> str:
        return (f"screens: {len(self.screens_found)} of {self.reference_screens} reference screens found "
                f"({self.generated_screens} generated); elements: {len(self.elements_covered)} of "
                f"{len(self.elements_seen)} reference elements seen are covered ({self.share_covered:.0%}; "
                f"{self.share_same_control:.0%} counting the same control; "
                f"{self.reference_elements} in the reference, {self.generated_elements} generated)")


def _grounded(g: Grounder, name: str, tree: UITree, within: UINode | None = None) -> int | None:
    try:
        found = g.ground(name, tree, within=within)
    except TapirError:
        return None
    return found.node.id if found is not None else None


def _items(g: Grounder, name: str, tree: UITree) -> list[UINode]:
    try:
        return g.items(name, tree)[:ITEMS_COMPARED]
    except TapirError:
        return []


def _children(doc: AppDocument) -> dict[str, list[Element]]:
    out: dict[str, list[Element]] = {}
    for e in doc.elements:
        if e.item_of:
            out.setdefault(e.item_of, []).append(e)
    return out


def compare_documents(generated: AppDocument, reference: AppDocument, trees: Iterable[UITree]) -> DocumentComparison:
    gen, ref = Grounder(generated, config=EXACT), Grounder(reference, config=EXACT)
    report = DocumentComparison(len(reference.screens), generated_screens=len(generated.screens),
                        reference_elements=sum(1 for _ in reference.elements),
                        generated_elements=sum(1 for _ in generated.elements))
    mapping: dict[str, Counter[str | None]] = {}
    seen: set[str] = set()
    covered: set[str] = set()
    control: set[str] = set()
    by: dict[str, Counter[str]] = {}
    ref_children, gen_children = _children(reference), _children(generated)
    for tree in trees:
        ref_screen = ref.identify_screen(tree).name
        if ref_screen is None:
            continue
        gen_screen = gen.identify_screen(tree).name
        mapping.setdefault(ref_screen, Counter())[gen_screen] += 1
        screen = reference.screen(ref_screen)
        assert screen is not None
        # every generated element that grounds here, by node (singles and lists)
        gen_nodes: dict[int, list[str]] = {}
        for e in generated.elements:
            if e.item_of or e.screen != gen_screen:
                continue
            nid = _grounded(gen, e.name, tree)
            if nid is not None:
                gen_nodes.setdefault(nid, []).append(e.name)
        for e in screen.elements:
            if e.item_of:
                continue
            nid = _grounded(ref, e.name, tree)
            if nid is None:
                continue
            seen.add(e.name)
            if nid in gen_nodes:
                covered.add(e.name)
                by.setdefault(e.name, Counter()).update(gen_nodes[nid])
            if nid in gen_nodes or any(same_control(tree, nid, g) for g in gen_nodes):
                control.add(e.name)
            if e.is_list and ref_children.get(e.name):
                _compare_children(e, tree, ref, gen, ref_children[e.name], gen_nodes.get(nid, []),
                                  gen_children, seen, covered, by, control)
    order = [e.name for e in reference.elements]
    report.elements_seen = [n for n in order if n in seen]
    report.elements_covered = [n for n in order if n in covered]
    report.screens_found = [s.name for s in reference.screens if s.name in mapping]
    report.screen_map = {s: c.most_common(1)[0][0] for s, c in mapping.items()}
    report.covered_by = {n: [g for g, _ in by[n].most_common()] for n in report.elements_covered}
    report.same_control = [n for n in order if n in control]
    return report


def _interactive(node: UINode) -> bool:
    return node.clickable or node.long_clickable or node.checkable or node.editable or node.scrollable


def same_control(tree: UITree, a: int, b: int) -> bool:
    """Are ``a`` and ``b`` one control: the same node, or one inside the other with no other
    interactive view in the outer one's subtree (a row and its checkbox, a holder and its field)?"""
    if a == b:
        return True
    for outer, inner in ((a, b), (b, a)):
        if outer in {x.id for x in tree.ancestors(inner)}:
            others = [d for d in tree.descendants(outer) if d.id != inner and d.visible and _interactive(d)]
            return not others or all(d.id in {x.id for x in tree.ancestors(inner)} for d in others)
    return False


def _compare_children(lst: Element, tree: UITree, ref: Grounder, gen: Grounder, children: list[Element],
                      gen_lists: list[str], gen_children: dict[str, list[Element]], seen: set[str],
                      covered: set[str], by: dict[str, Counter[str]], control: set[str]) -> None:
    for item in _items(ref, lst.name, tree):
        gen_nodes: dict[int, list[str]] = {}
        for gl in gen_lists:
            for gc in gen_children.get(gl, []):
                nid = _grounded(gen, gc.name, tree, within=item)
                if nid is not None:
                    gen_nodes.setdefault(nid, []).append(gc.name)
        for child in children:
            nid = _grounded(ref, child.name, tree, within=item)
            if nid is None:
                continue
            seen.add(child.name)
            if nid in gen_nodes:
                covered.add(child.name)
                control.add(child.name)
                by.setdefault(child.name, Counter()).update(gen_nodes[nid])


# ---------------------------------------------------------------------------------------------
# Task steps


@dataclass(frozen=True)
class RecordedTaskStep:
    """A step of a recorded task: the hierarchy and the node acted on."""

    tree: UITree
    node: int
    label: str = ""


def _clickable_owner(tree: UITree, node_id: int) -> int | None:
    node: UINode | None = tree.node(node_id)
    while node is not None:
        if node.clickable or node.checkable or node.editable:
            return node.id
        node = tree.parent(node.id)
    return None


def step_covered(document: AppDocument, grounder: Grounder, step: RecordedTaskStep) -> bool:
    """Does some element of ``document`` ground to the acted node (or the clickable view around
    it, or a list item that holds it) in the step's hierarchy?"""
    tree = step.tree
    targets = {step.node}
    owner = _clickable_owner(tree, step.node)
    if owner is not None:
        targets.add(owner)
    path = {step.node, *(a.id for a in tree.ancestors(step.node))}
    for e in document.elements:
        if e.item_of:
            continue
        nid = _grounded(grounder, e.name, tree)
        if nid is None:
            continue
        if nid in targets:
            return True
        if e.is_list and nid in path:
            try:
                items = grounder.items(e.name, tree)
            except TapirError:
                continue
            if any(i.id in path for i in items):
                return True
    return False


def step_coverage(document: AppDocument, steps: Sequence[RecordedTaskStep]) -> tuple[int, int]:
    """(steps covered, steps) for ``document``."""
    grounder = Grounder(document, config=EXACT)
    return sum(1 for s in steps if step_covered(document, grounder, s)), len(steps)
