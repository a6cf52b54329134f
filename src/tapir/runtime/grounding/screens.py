"""Which document screen a tree shows, from the screens' signatures and elements.

Every screen gets an evidence score in [0, 1]:

* **gates**: a signature ``activity`` that differs from the tree's known foreground activity, or
  a ``none`` XPath that matches, rules the screen out (score 0);
* **signature**: the mean of the parts the signature has: the fraction of its ``all`` XPaths that
  match, the similarity of its AutoDroid-V2 ``skeleton`` to the tree's (Dice coefficient of the
  sets of root-to-node tag/resource-id paths; upstream only tries an exact string match, then a
  top-down common structure), and 1.0 for a matching activity;
* **elements**: what the screen's own elements (list-item children excluded; at most 12, spread
  over the screen) found, counted by how *specific* the identifier that found each one is: an
  identifier that tests a text or a description is strong evidence (screens built from the same
  layout differ in their texts), a resource id weaker, a class or other attribute weakest. The
  evidence of the found elements adds up (``1 - prod(1 - p)``): more found elements, more
  evidence, whatever the length of the document's element list; a screen is not penalised
  because its document lists elements that are absent (an error text shown only on error). A
  screen without signature parts is scored on this alone; otherwise it weighs 0.3 against the
  signature's 0.7.

**Look-alikes.** Screens within the margin of the best one are decided by the evidence that
differs: the one whose elements were found by more text or description identifiers wins, and
when it has at least one such hit more than a rival, the rival is *beaten* (``ScreenMatch.beaten``):
the answer is confident although the scores are close. When none shows any of its texts, a
screen none of whose texts is missing beats one all of whose texts are. Two dialogs made from the
same layout (same skeleton, same resource ids, different options) are told apart this way.
Before that, views one layout has and the other's lacks decide: screens that split one activity
by a mode or a selected tab (a camera's photo and video modes) define the same buttons under their
own names, and which of those copies each screen's evidence sample happened to include says
nothing about which screen shows; a view found by its resource id that the rival's skeleton does
not have, in a container that the rival's skeleton shows with other views in it (the photo mode's
timer button beside the settings button), does. A screen with such views, against a rival with
none, wins and beats it (``Evidence.exclusive``). A list's rows are not compared so: a list that
was empty when the rival's skeleton was recorded shows no container with views in it.

Element evidence is computed only for screens that can still win on it (not at all when one
screen alone can reach the threshold and its signature does: its score is then the signature's
part), and the XPaths it uses are answered from an index of the screen's attribute values
(``identifiers.simple_xpath``), each asked for one hit, so identifying a screen needs no HTML
rendering.

**Drift.** A test whose resource id is absent is read again with the id the screen shows
renamed (``ScreenView.renamed``), for ``RENAMED`` of its weight; when no screen is recognised,
tests that find nothing for want of what they look for count as ``UNTELLABLE`` and the screens
are scored again (``ScreenIdentifier.identify``). A list's documented options shown on screen
count as a text found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from lxml import etree

from tapir.core.document import AppDocument, Element, Identifier, Screen
from tapir.core.errors import DocumentError
from tapir.runtime.grounding.config import GroundingConfig
from tapir.runtime.grounding.fuzzy import fold
from tapir.runtime.grounding.identifiers import evaluate, renamed_identifier, required_resource_id, simple_xpath
from tapir.runtime.grounding.result import ScreenMatch
from tapir.runtime.grounding.screen_view import ScreenView

SIGNATURE_WEIGHT = 0.7
#: Elements per screen whose identifiers are tried for element evidence.
EVIDENCE_SAMPLE = 12

Path = tuple[tuple[str, str], ...]


def skeleton_paths(root: etree._Element) -> frozenset[Path]:
    """Root-to-node paths of (lower-cased tag, resource id) pairs; repeated siblings collapse by set."""
    out: set[Path] = set()
    stack: list[tuple[etree._Element, Path]] = [(root, ())]
    while stack:
        el, prefix = stack.pop()
        if not isinstance(el.tag, str):
            continue
        path = (*prefix, (el.tag.lower(), el.get("resource_id") or ""))
        out.add(path)
        stack.extend((c, path) for c in el)
    return frozenset(out)


def parse_skeleton(text: str) -> frozenset[Path]:
    try:
        root = etree.fromstring(f"<skeleton_root>{text}</skeleton_root>",
                                etree.XMLParser(recover=True, resolve_entities=False))
    except etree.XMLSyntaxError:
        return frozenset()
    if root is None:
        return frozenset()
    paths: set[Path] = set()
    for child in root:
        paths |= skeleton_paths(child)
    return frozenset(paths)


def dice(a: frozenset[Path], b: frozenset[Path]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def activity_matches(signature: str, activity: str) -> bool:
    """``.MainActivity``, ``pkg/.MainActivity``, ``MainActivity`` or the full class name."""
    want = signature.rsplit("/", 1)[-1]
    if want.startswith("."):
        return activity.endswith(want)
    return activity == want or activity.endswith("." + want)


#: How much one found element says, by the kind of identifier that found it.
SPECIFIC, STRUCTURAL, WEAK = 0.6, 0.35, 0.2
#: A test that holds once its resource id is read renamed counts this share of one that holds;
#: one that finds nothing for want of what it looks for counts as half true when identification
#: falls back (``identify``).
RENAMED, UNTELLABLE = 0.85, 0.5
_SPECIFIC_KEYS = frozenset({"text()", "@text", "@content-desc", "@alt", "@content_desc", "@content_description"})
_RID_KEYS = frozenset({"@resource-id", "@resource_id"})
_SPECIFIC_LITERAL = re.compile(r"""(?:text\(\)|@text|@content-desc|@alt|@content_desc|\balt\b)\s*(?:=|,)\s*["']""")
_RID_LITERAL = re.compile(r"@resource[-_]id\s*(?:=|,)")


def specificity(xpath: str) -> float:
    """The evidence weight of an identifier's hit: a text or description test is specific,
    a resource id structural, anything else weak."""
    simple = simple_xpath(xpath)
    if simple is not None:
        keys = {k for k, _ in simple[1]}
        if keys & _SPECIFIC_KEYS:
            return SPECIFIC
        return STRUCTURAL if keys & _RID_KEYS else WEAK
    if _SPECIFIC_LITERAL.search(xpath):
        return SPECIFIC
    return STRUCTURAL if _RID_LITERAL.search(xpath) else WEAK


@dataclass(frozen=True)
class _Layout:
    """What a screen's skeleton says of its views: the resource ids in it, the paths of each id's
    parents, and the paths of the views that have views in them."""

    ids: frozenset[str]
    parents: dict[str, frozenset[Path]]
    containers: frozenset[Path]

    @classmethod
    def of(cls, skeleton: frozenset[Path]) -> _Layout:
        parents: dict[str, set[Path]] = {}
        for path in skeleton:
            if path[-1][1]:
                parents.setdefault(path[-1][1], set()).add(path[:-1])
        return cls(frozenset(parents), {k: frozenset(v) for k, v in parents.items()},
                   frozenset(path[:-1] for path in skeleton))


@dataclass(frozen=True)
class _ScreenFacts:
    screen: Screen
    skeleton: frozenset[Path]
    #: (element, its evidence identifiers, most specific first), a sample spread over the screen
    elements: tuple[tuple[Element, tuple[tuple[Identifier, float], ...]], ...]


@dataclass(frozen=True)
class Evidence:
    """What a screen's elements found on a tree."""

    #: elements found by a text or description identifier
    specific: int = 0
    #: elements found by structure only (resource id, class)
    structural: int = 0
    #: ``1 - prod(1 - p)`` over the found elements' weights
    score: float = 0.0
    #: elements with a text or description identifier that found nothing
    unseen: int = 0
    #: the XPaths that found the found elements
    found: tuple[str, ...] = ()

    @property
    def contradicted(self) -> bool:
        """None of the texts the screen's elements are known by is showing (and it has some)."""
        return self.specific == 0 and self.unseen > 0

    @property
    def key(self) -> tuple[int, int, int]:
        return self.specific, 0 if self.contradicted else 1, self.structural

    def exclusive(self, mine: _Layout, rival: _Layout, defines: frozenset[str]) -> int:
        """How many elements were found on views a rival's layout lacks: by an XPath the rival
        does not define (``defines``), requiring a resource id that this screen's skeleton has in
        a container that the rival's skeleton shows with other views but without this one."""
        count = 0
        for xpath in self.found:
            rid = required_resource_id(xpath)
            if xpath in defines or rid is None:
                continue
            rid = rid.rsplit("/", 1)[-1]
            if rid not in rival.ids and mine.parents.get(rid, frozenset()) & rival.containers:
                count += 1
        return count

    def beats(self, other: Evidence) -> bool:
        """Decisively better than a look-alike: more elements found by their texts, or, when
        neither shows any, none of its texts missing while all of the other's are."""
        if self.specific != other.specific:
            return self.specific > other.specific
        return other.contradicted and not self.contradicted and self.unseen == 0


def _evidence_sample(elements: Sequence[Element]) -> tuple[tuple[Element, tuple[tuple[Identifier, float], ...]], ...]:
    """At most ``EVIDENCE_SAMPLE`` of a screen's own elements, evenly spread, with the identifiers
    that test attributes or texts, most specific first. Bare positions are left out: nearly any
    screen of the app has a view at ``//FrameLayout/LinearLayout/...``, so their hits say little
    about the screen, and they are the slow XPaths (the attribute tests are answered from an index)."""
    usable = []
    for e in elements:
        if e.item_of is not None:
            continue
        tests = [(i, specificity(i.xpath)) for i in e.identifiers if simple_xpath(i.xpath) is not None]
        if tests or e.options:
            usable.append((e, tuple(sorted(tests, key=lambda t: -t[1]))))
    if len(usable) <= EVIDENCE_SAMPLE:
        return tuple(usable)
    step = len(usable) / EVIDENCE_SAMPLE
    return tuple(usable[int(i * step)] for i in range(EVIDENCE_SAMPLE))


def _shows_options(options: Sequence[str], view: ScreenView) -> bool:
    """Whether the screen shows the documented options of a list, as texts or descriptions (two
    of them, or the one there is)."""
    shown: set[str] | None = view.memo.get("shown_texts")
    if shown is None:
        terms = view.tree_terms
        shown = view.memo["shown_texts"] = {fold(t) for key in ("@text", "@content-desc")
                                             for t in terms.index(key) if t}
    return sum(fold(o) in shown for o in options) >= min(2, len(options))


class ScreenIdentifier:
    """Scores every screen of a document against a view; see the module docstring."""

    def __init__(self, document: AppDocument, config: GroundingConfig) -> None:
        self.document = document
        self.config = config
        self._facts = tuple(
            _ScreenFacts(
                s,
                parse_skeleton(s.signature.skeleton) if s.signature.skeleton else frozenset(),
                _evidence_sample(s.elements),
            )
            for s in document.screens
        )
        #: per screen, its elements' XPaths and its skeleton's resource ids: what a look-alike
        #: lacks (``Evidence.exclusive``)
        self._defines = {s.name: frozenset(i.xpath for e in s.elements for i in e.identifiers)
                         for s in document.screens}
        self._layouts = {f.screen.name: _Layout.of(f.skeleton) for f in self._facts}
        #: identifiers that failed to evaluate, reported once by the grounder
        self.broken: dict[str, str] = {}

    def _hits(self, identifier: Identifier, view: ScreenView) -> bool:
        try:
            return bool(evaluate(identifier, view, limit=1))
        except DocumentError as exc:
            self.broken.setdefault(identifier.xpath, exc.message)
            return False

    def _holds(self, identifier: Identifier, view: ScreenView, untellable: float = 0.0) -> float:
        """How surely ``identifier`` finds a view: 1.0, ``RENAMED`` when it does once its resource
        id is read under another naming convention, ``untellable`` when it finds nothing but its
        resource id is on no view (``identify``), else 0."""
        if self._hits(identifier, view):
            return 1.0
        renamed = renamed_identifier(identifier, view)
        if renamed is not None:
            return RENAMED if self._hits(renamed, view) else 0.0
        rid = required_resource_id(identifier.xpath)
        return untellable if rid is None or rid not in view.resource_names else 0.0

    def evidence(self, facts: _ScreenFacts, view: ScreenView) -> Evidence:
        specific = structural = unseen = 0
        missing = 1.0
        hits: list[str] = []
        for element, tests in facts.elements:
            found = None
            for identifier, weight in tests:
                held = self._holds(identifier, view)
                if held >= RENAMED:
                    found, by = weight * held, identifier.xpath
                    break
            if element.options and (found is None or found < SPECIFIC) and _shows_options(element.options, view):
                # a list found by the options the document says it has
                found, by = SPECIFIC, ""  # a list found by the options the document says it has
            if (element.options or (tests and tests[0][1] >= SPECIFIC)) and (found is None or found < SPECIFIC):
                unseen += 1  # known by a text that is not showing
            if found is None:
                continue
            if found >= SPECIFIC:
                specific += 1
            else:
                structural += 1
            missing *= 1 - found
            hits.append(by)
        return Evidence(specific, structural, 1 - missing, unseen, tuple(hits))

    def identify(self, view: ScreenView) -> ScreenMatch:
        """The screen ``view`` shows. A signature test that does not hold counts as false; when
        then no screen reaches the threshold, the app may be another version than the document's
        (an id dropped, a title reworded): a test that fails for want of what it looks for (its
        resource id on no view, its text nowhere) counts as half true (``UNTELLABLE``), one whose
        id is there and says otherwise (another tab selected) still as false, and the screens
        are scored again. A screen is named so only when at least two of its elements are found:
        its elements decide, not one toolbar button any screen has."""
        found, _ = self._identify(view, 0.0)
        if found.name is not None:
            return found
        again, evidence = self._identify(view, UNTELLABLE)
        seen = evidence.get(again.name or "", Evidence())
        if again.name is None or seen.specific + seen.structural < 2:
            return found
        return replace(again, detail=f"{again.detail}, counting signature tests that find nothing as unknown")

    def _identify(self, view: ScreenView, untellable: float) -> tuple[ScreenMatch, dict[str, Evidence]]:
        tree = view.tree
        signature_scores: dict[str, float | None] = {}
        for facts in self._facts:
            sig = facts.screen.signature
            parts: list[float] = []
            if sig.activity and tree.activity:
                if not activity_matches(sig.activity, tree.activity):
                    continue
                parts.append(1.0)
            if sig.none_of and any(self._holds(i, view) >= RENAMED for i in sig.none_of):
                continue
            if sig.all_of:
                parts.append(sum(self._holds(i, view, untellable) for i in sig.all_of) / len(sig.all_of))
            if facts.skeleton:
                parts.append(dice(facts.skeleton, view.skeleton))
            signature_scores[facts.screen.name] = sum(parts) / len(parts) if parts else None

        known = [s for s in signature_scores.values() if s is not None]
        best_signature = max(known, default=0.0)
        threshold = self.config.screen_threshold
        # the screens that can reach the threshold at all; when one alone can, and its signature
        # reaches it, its elements cannot change the answer and are not consulted
        reach = [n for n, sig in signature_scores.items()
                 if sig is None or SIGNATURE_WEIGHT * sig + (1 - SIGNATURE_WEIGHT) >= threshold]
        lone = reach[0] if len(reach) == 1 else None
        scores: dict[str, float] = {}
        evidence: dict[str, Evidence] = {}
        for facts in self._facts:
            name = facts.screen.name
            if name not in signature_scores:
                continue
            sig_score = signature_scores[name]
            # element evidence can add at most 1 - SIGNATURE_WEIGHT: skip screens it cannot lift
            if sig_score is not None and (SIGNATURE_WEIGHT * sig_score + (1 - SIGNATURE_WEIGHT) < \
                    SIGNATURE_WEIGHT * best_signature - 1e-9
                    or (name == lone and SIGNATURE_WEIGHT * sig_score >= threshold)):
                scores[name] = SIGNATURE_WEIGHT * sig_score
                continue
            if facts.elements:
                found = evidence[name] = self.evidence(facts, view)
                element_score = found.score
            else:
                element_score = 0.0 if sig_score is None else sig_score
            if sig_score is None:
                scores[name] = element_score
            else:
                scores[name] = SIGNATURE_WEIGHT * sig_score + (1 - SIGNATURE_WEIGHT) * element_score
        # falling back, texts are what may have been reworded: the scores alone decide
        return self._decide(scores, evidence, lookalikes=not untellable), evidence

    def _decide(self, scores: dict[str, float], evidence: dict[str, Evidence], *,
                lookalikes: bool = True) -> ScreenMatch:
        margin_cfg = self.config.screen_margin
        ranked = sorted(((n, round(s, 6)) for n, s in scores.items() if s > 0), key=lambda p: -p[1])
        if not ranked or ranked[0][1] < self.config.screen_threshold:
            best = ranked[0][1] if ranked else 0.0
            return ScreenMatch(None, best, tuple(ranked), "no screen reaches the threshold "
                               f"{self.config.screen_threshold:.2f}")
        top = ranked[0][1]
        close = [n for n, s in ranked if top - s < margin_cfg and s >= self.config.screen_threshold]
        beaten: set[str] = set()
        name = ranked[0][0]
        if len(close) > 1 and lookalikes:
            # look-alikes: the evidence that differs decides: first views one's layout lacks,
            # then texts and descriptions found
            none = Evidence()

            def exclusive(n: str, rival: str) -> int:
                return evidence.get(n, none).exclusive(self._layouts[n], self._layouts[rival],
                                                       self._defines.get(rival, frozenset()))

            def lacks(n: str, rival: str) -> bool:  # the rival lacks views n shows, not the other way
                return exclusive(n, rival) > 0 and exclusive(rival, n) == 0

            name = max(close, key=lambda n: (sum(lacks(n, r) for r in close if r != n),
                                             evidence.get(n, none).key, scores[n]))
            mine = evidence.get(name, none)
            beaten = {n for n in close
                      if n != name and (lacks(name, n) or mine.beats(evidence.get(n, none)))}
            ranked.sort(key=lambda p: (p[0] != name, -p[1]))
        best = ranked[0][1]
        rivals = [(n, s) for n, s in ranked[1:] if n not in beaten]
        margin = best - rivals[0][1] if rivals else best
        if margin >= margin_cfg:
            how = f"{name} leads by {margin:.2f}"
            if beaten:
                found = evidence.get(name, Evidence())
                how += (f" (look-alike {', '.join(sorted(beaten))} beaten: {found.specific} element(s) found by "
                        "text or description" + (", none of theirs showing" if not found.specific else "")
                        + "".join(f"; {exclusive(name, n)} on views {n}'s layout lacks" for n in sorted(beaten)
                                  if exclusive(name, n)) + ")")
            return ScreenMatch(name, best, tuple(ranked), how, frozenset(beaten))
        confidence = best * (0.5 + 0.5 * max(margin, 0.0) / margin_cfg)
        tied = [name, *(n for n, s in rivals if best - s < margin_cfg)]
        return ScreenMatch(name, round(confidence, 6), tuple(ranked),
                           f"near tie between {', '.join(tied)} (margin {margin:.2f})", frozenset(beaten))
