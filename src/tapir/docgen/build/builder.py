"""Build an app document from exploration traces: the offline stage of AutoDroid-V2 (section 3.1).

    traces = [read_trace("music-trace/")]
    result = build_document(traces, BuildOptions(app_name="Music"))
    Path("music.yaml").write_text(result.text)
    print(result.report.render())

The stages, each in its own module: hierarchies of the app are read (``trace``), described
(``anatomy``), grouped into screens by layout and function (``grouping``); each screen's abstract
elements are collected with checked identifier queues (``elements``, ``identifiers``); recorded
steps become the element transition graph with forward effects and backward dependency paths
(``graph``); screens and elements are named (``naming``, a model may be plugged in through
``Annotator``); elements the danger policy marks are written ``sensitive``; each screen gets a
signature that tells it apart from the others. The result is a document in Tapir's format
(``docs/app-document.md``), validated by the same loader as hand-written ones, and a report of
what was built and what was left out, and why.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tapir.core.document import AppDocument, Step
from tapir.core.errors import DocumentError, UsageError
from tapir.docgen.build.anatomy import Anatomy, looks_static
from tapir.docgen.build.elements import Dropped, ElementDraft, ScreenDraft, collect
from tapir.docgen.build.graph import (
    COMMIT_WORDS,
    Edge,
    Transition,
    appearance_steps,
    forward_effects,
    map_transitions,
    navigation_edges,
    option_effects,
    screen_paths,
)
from tapir.docgen.build.grouping import group_states
from tapir.docgen.build.identifiers import TreeIndex, screen_signature
from tapir.docgen.build.naming import Annotator, Namer, element_base, resource_words, slug, with_suffix
from tapir.docgen.build.policy import DangerPolicy
from tapir.docgen.build.trace import StepRecord, Trace
from tapir.docgen.loader import loads_document
from tapir.docgen.writer import FlowList, to_yaml
from tapir.dsl.api import Kind


@dataclass(frozen=True)
class BuildOptions:
    #: The app's package; by default the one the traces were recorded for.
    package: str | None = None
    app_name: str | None = None
    max_path_length: int = 8
    max_paths: int = 4
    max_identifiers: int = 3
    policy: DangerPolicy = field(default_factory=DangerPolicy.default)
    annotator: Annotator | None = None
    #: What the traces are called in the report and the document's header (default: their
    #: directories): a trace made in a temporary directory is named after what it was made from,
    #: so that the same input gives the same document.
    sources: tuple[str, ...] = ()


@dataclass
class ScreenReport:
    name: str
    states: int
    elements: int
    kinds: dict[str, int]
    paths: int
    signature: str
    #: Hierarchies of other screens its signature also matches (0: it is told apart).
    ambiguous: int = 0


@dataclass
class BuildReport:
    sources: list[str]
    package: str
    states: int
    steps: int
    states_in_app: int
    screens: list[ScreenReport] = field(default_factory=list)
    elements: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    identifiers: int = 0
    paths: int = 0
    transitions: int = 0
    sensitive: list[str] = field(default_factory=list)
    #: reason -> count, and a few examples per reason.
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def drop(self, reason: str, example: str | None = None, n: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + n
        if example:
            found = self.examples.setdefault(reason, [])
            if len(found) < 3 and example not in found:
                found.append(example)

    def to_json(self) -> dict[str, Any]:
        return {
            "sources": self.sources, "package": self.package, "states": self.states, "steps": self.steps,
            "states_in_app": self.states_in_app, "screens": [vars(s) for s in self.screens],
            "elements": self.elements, "kinds": self.kinds, "identifiers": self.identifiers, "paths": self.paths,
            "transitions": self.transitions, "sensitive": self.sensitive, "dropped": self.dropped,
            "examples": self.examples, "warnings": self.warnings,
        }

    def render(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items()))
        lines = [
            f"built from {', '.join(self.sources)}: {self.states} hierarchies ({self.states_in_app} of "
            f"{self.package}), {self.steps} steps",
            f"{len(self.screens)} screens, {self.elements} elements ({kinds}), {self.identifiers} identifiers, "
            f"{self.paths} dependency paths, {self.transitions} transitions",
        ]
        width = max((len(s.name) for s in self.screens), default=0)
        for s in self.screens:
            amb = f"  (signature also matches {s.ambiguous} other hierarchies)" if s.ambiguous else ""
            lines.append(f"  {s.name:<{width}}  {s.states:>4} hierarchies  {s.elements:>3} elements  "
                         f"{s.paths} paths{amb}")
        if self.sensitive:
            lines.append(f"sensitive ({len(self.sensitive)}): " + ", ".join(self.sensitive[:8])
                         + (" ..." if len(self.sensitive) > 8 else ""))
        for reason, n in sorted(self.dropped.items(), key=lambda kv: -kv[1]):
            ex = self.examples.get(reason)
            lines.append(f"left out: {n} {reason}" + (f" (e.g. {'; '.join(ex)})" if ex else ""))
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass
class BuildResult:
    text: str
    document: AppDocument
    data: dict[str, Any]
    report: BuildReport
    #: (screen name, draft) for every element written, and the screen drafts (for merging).
    screens: list[ScreenDraft]


def _short_activity(activity: str, package: str) -> str:
    return activity[len(package):] if package and activity.startswith(package + ".") else activity


def build_document(traces: Sequence[Trace], options: BuildOptions | None = None) -> BuildResult:
    """The document the traces describe (see the module docstring)."""
    return _DocumentBuilder(traces, options or BuildOptions()).build()


class _DocumentBuilder:
    def __init__(self, traces: Sequence[Trace], options: BuildOptions) -> None:
        if not traces:
            raise UsageError("no trace to build a document from")
        self.traces = traces
        self.options = options
        packages = {t.package for t in traces if t.package}
        if options.package:
            self.package = options.package
        elif len(packages) == 1:
            self.package = packages.pop()
        else:
            raise UsageError(f"the traces are of different apps ({', '.join(sorted(packages)) or 'unknown'})",
                             hint="pass --package to say which app the document is for")
        sources = list(options.sources) or [str(t.directory) for t in traces]
        self.report = BuildReport(sources, self.package, 0, 0, 0)

    # -- stages ---------------------------------------------------------------------------------

    def build(self) -> BuildResult:
        steps, anatomies = self._read()
        echoes = self._echoes(steps, anatomies)
        groups = group_states(anatomies, echoes)
        if not groups:
            raise UsageError(f"the traces hold no hierarchy of {self.package}",
                             hint="explore the app first, or pass --package with the app the traces recorded")
        self.group_of = {sid: g.index for g in groups for sid in g.states}
        indexes = {sid: TreeIndex(a.tree) for sid, a in anatomies.items()}
        self.screens = [collect(g, indexes, self.options.max_identifiers) for g in groups]
        self.drafts = {(s.group.index, d.key): d for s in self.screens for d in s.elements}
        for s in self.screens:
            for d in s.dropped:
                self.report.drop(f"elements: {d.reason}", d.what)
        self.transitions, unmapped = map_transitions(steps, self.group_of, anatomies,
                                                     lambda g, k: (g, k) in self.drafts)
        for reason, n in unmapped.items():
            self.report.drop(f"steps: {reason}", n=n)
        self.report.transitions = len(self.transitions)
        self.start = self._start_screen()
        self._returns_cache = self._returns()
        self._mark_sensitive()
        self._name_screens()
        self._name_elements()
        self._effects()
        self._paths()
        data = self._assemble(indexes)
        return self._finish(data)

    def _read(self) -> tuple[list[StepRecord], dict[str, Anatomy]]:
        many = len(self.traces) > 1
        anatomies: dict[str, Anatomy] = {}
        steps: list[StepRecord] = []
        for n, trace in enumerate(self.traces):
            prefix = f"t{n + 1}:" if many else ""
            if trace.meta.get("complete") is False:
                self.report.warnings.append(f"{trace.directory} is incomplete (the exploration was interrupted "
                                            "or failed): what it recorded is used")
            self.report.states += len(trace.states)
            self.report.steps += len(trace.steps)
            for sid in trace.states:
                package = trace.package_of(sid)
                if package != self.package:
                    self.report.drop("hierarchies: of another app or the launcher", package or "unknown")
                    continue
                anatomy = Anatomy.of(trace.tree(sid), activity=trace.activity(sid), package=package)
                if not anatomy.kept:
                    self.report.drop("hierarchies: nothing visible")
                    continue
                anatomies[prefix + sid] = anatomy
            for s in trace.steps:
                steps.append(StepRecord(s.index, prefix + s.before, s.action, prefix + s.after, s.time, s.note))
        self.report.states_in_app = len(anatomies)
        self.anatomies = anatomies
        return steps, anatomies

    def _echoes(self, steps: Sequence[StepRecord], anatomies: dict[str, Anatomy]) -> dict[str, set[str]]:
        """Per state, the labels of what was tapped to reach it (content a dialog title may repeat)."""
        out: dict[str, set[str]] = {}
        for s in steps:
            t = s.action.target
            if t is None or s.after not in anatomies:
                continue
            before = anatomies.get(s.before)
            # only content echoes: a row's label ("Road trip") repeated as the title of what it
            # opens; a button's label ("New playlist") is fixed and may well be the title
            if before is None or t.node not in before.in_item:
                continue
            container, item = before.in_item[t.node]
            if before.window != "full" and not before.lists[container].scrollable:
                continue  # a menu's or a choice dialog's options are fixed labels, not content
            labels = {t.text.strip(), t.content_desc.strip(), before.label(t.node)}
            labels |= {d.text.strip() for d in before.tree.descendants(item)}
            out.setdefault(s.after, set()).update(x for x in labels if x)
        return out

    def _start_screen(self) -> int:
        after_start = Counter(t.after for t in self.transitions if t.action == "start" and t.after is not None)
        if after_start:
            return after_start.most_common(1)[0][0]
        return 0

    def _mark_sensitive(self) -> None:
        policy = self.options.policy
        for s in self.screens:
            for d in s.elements:
                if d.role == "list":
                    risky = [o for o in d.options or d.examples if policy.reason(o)]
                    if risky:
                        d.notes.append("sensitive options: " + ", ".join(risky))
                    continue
                if d.kind in (Kind.TEXT, Kind.IMAGE):
                    continue
                reason = policy.reason(*d.descs, *(t for t in d.texts if not d.dynamic), d.label, d.resource_id)
                if reason:
                    d.sensitive = reason

    # -- naming ---------------------------------------------------------------------------------

    def _openers(self, group: int) -> list[str]:
        """Labels of what was acted on to open a screen, most frequent first."""
        found: Counter[str] = Counter()
        for t in self.transitions:
            if t.after == group and t.moved and t.before is not None and t.element is not None:
                d = self.drafts.get((t.before, t.element))
                if d is not None:
                    # a row's label is content ("Amalfi Blue"): the list says what opened it
                    found[d.display if d.role != "list" or d.options else (d.display + "_item")] += 1
        return [label for label, _ in found.most_common() if label]

    def _name_screens(self) -> None:
        wanted = [self._screen_name(s) for s in self.screens]
        annotations: dict[int, str] = {}
        if self.options.annotator is not None:
            for i, s in enumerate(self.screens):
                found = self.options.annotator.screen(self._screen_facts(s, wanted[i][0]))
                if found is not None:
                    name = slug(found.name, 6)
                    if name:
                        wanted[i] = (name if name.endswith(("_screen", "_dialog", "_menu")) else f"{name}_screen",
                                     [wanted[i][0], *wanted[i][1]])
                    annotations[i] = found.description
        bases = [w[0].rsplit("_", 1)[0] for w in wanted]
        counts = Counter(w for w, _ in wanted)
        namer = Namer()
        # the start screen first, then the most visited: a name several screens want goes to
        # the first of them as it is, and the others are told apart
        order = sorted(range(len(self.screens)), key=lambda i: (i != self.start, -len(self.screens[i].group.states)))
        first_for: dict[str, int] = {}
        for i in order:
            first_for.setdefault(wanted[i][0], i)
        for i, (s, (name, alternatives)) in sorted(enumerate(zip(self.screens, wanted, strict=True)),
                                                  key=lambda x: order.index(x[0])):
            # a name two screens want goes to neither: each is told apart by the screen it is
            # opened from ("playlist_more_options_menu"), else by its other candidate names
            suffix = name.rsplit("_", 1)[-1]
            core = name[: -len(suffix) - 1] if name.endswith("_" + suffix) and name != suffix else ""
            by_opener = [f"{bases[g]}_{core}_{suffix}" if core else f"{bases[g]}_{suffix}"
                         for g in self._opener_screens(s.group.index)]
            shared = counts[name] > 1 and first_for[name] != i
            options = [*by_opener, *alternatives] if shared else [name, *by_opener, *alternatives]
            # a shared name with neither an opener nor another candidate ("dialog" opened from
            # nowhere recorded) is told apart by a number
            options = options or [name]
            s.name = namer.unique(options[0], options[1:])
            s.description = annotations.get(i) or self._screen_description(s)

    def _screen_name(self, s: ScreenDraft) -> tuple[str, list[str]]:
        """The name a screen wants, and other names it could take."""
        g = s.group
        first = g.first
        window = first.window
        activity = g.activity.rsplit(".", 1)[-1].removesuffix("Activity") if g.activity else ""
        act = slug(activity) if activity else ""
        if window != "full":
            titles = {g.anatomies[x].dialog_title for x in g.states}
            title = titles.pop() if len(titles) == 1 else None
            suffix = "menu" if window == "menu" and not title else "dialog"
            # what opened it names it ("more_options_menu"), unless that is a mere OK or Cancel
            openers = [o for o in self._openers(g.index) if slug(o) not in _GENERIC]
            options = next((d.options for d in s.elements if d.role == "list" and d.options), [])
            # last, what its app calls its contents ("dialog_select_alarm_sound_radio"): the
            # platform's own ids (android:id/message) are in every dialog
            own = next((w for d in s.elements if d.resource_id and not d.resource_id.startswith("android:")
                        and (w := resource_words(d.resource_id))), "")
            candidates = [slug(title) if title and looks_static(title) else "",
                          *(slug(o) for o in openers[:1]), slug(options[0]) if options else "", own]
            names = [f"{c}_{suffix}" for c in candidates if c] or [suffix]
            return names[0], names[1:]
        tab = next((first.label(n) for n in first.order if first.tree.node(n).selected
                    and n not in first.in_item and first.is_tab(n) and first.label(n)), "")
        titles = {g.anatomies[x].toolbar_title for x in g.states}
        title = titles.pop() if len(titles) == 1 else None
        candidates = [slug(tab) if tab and looks_static(tab) else "", slug(title) if title and looks_static(title)
                      else "", act, "main"]
        names = [f"{c}_screen" for c in dict.fromkeys(candidates) if c]
        return names[0], names[1:]

    def _opener_screens(self, group: int) -> list[int]:
        """The screens a screen is opened from, most often first."""
        found: Counter[int] = Counter(t.before for t in self.transitions
                                      if t.after == group and t.moved and t.before is not None and t.before != group)
        return [g for g, _ in found.most_common()]

    def _screen_description(self, s: ScreenDraft) -> str:
        g = s.group
        first = g.first
        window = first.window
        options = next((d.options for d in s.elements if d.role == "list" and d.options), [])
        buttons = [d.display for d in s.elements if d.kind is Kind.BUTTON and d.role == "single"][:4]
        if window == "menu":
            text = "A menu" + (f" with the options {_quote_list(options)}" if options else "")
        elif window == "dialog":
            title = first.dialog_title
            text = "A dialog" + (f" titled '{title}'" if title else "")
            if options:
                text += f" with the choices {_quote_list(options)}"
            if buttons:
                text += f"; buttons {_quote_list(buttons)}"
        else:
            short = _short_activity(g.activity, self.package)
            title = first.toolbar_title
            text = (f"The '{title}' screen" if title and looks_static(title) else "A screen") + (
                f" of {short}" if short else "")
            lists = list(dict.fromkeys(d.display for d in s.elements if d.role == "list"))
            if lists:
                text += f", showing {_quote_list(lists)}"
        return text + "."

    def _screen_facts(self, s: ScreenDraft, name: str) -> str:
        """What a model is told about a screen: its heuristic name, window, titles and controls."""
        first = s.group.first
        lines = [f"heuristic name: {name}", f"window: {first.window}", f"activity: {s.group.activity or '-'}"]
        if first.dialog_title or first.toolbar_title:
            lines.append(f"title: {first.dialog_title or first.toolbar_title}")
        for d in s.elements[:30]:
            extra = f" options {d.options}" if d.options else f" e.g. {d.examples}" if d.examples else ""
            lines.append(f"- {d.kind.value} {d.display!r}{extra}")
        return "\n".join(lines)

    def _name_elements(self) -> None:
        for s in self.screens:
            namer = Namer()
            for d in s.elements:
                alternative = ""
                lists = sum(1 for x in s.elements if x.role == "list")
                if d.role == "list" and d.options and (not d.resource_id or (d.item_kind is Kind.CHECKBOX
                                                                              and lists == 1)):
                    base = "options"
                elif d.role == "list":
                    base = element_base(d.resource_id, "", "", Kind.LIST, class_name=d.class_name) or "items"
                else:
                    label = d.label or ("" if d.dynamic else _most(d.texts))
                    desc = d.stable_desc
                    # only labels that read as names ("Add alarm", not "07:30" or a paragraph)
                    by_label = element_base("", desc if looks_static(desc) else "",
                                            label if looks_static(label) else "", d.kind)
                    by_id = element_base(d.resource_id, "", "", d.kind,
                                         class_name=d.class_name if d.kind not in (Kind.TEXT, Kind.INPUT) else "")
                    if not d.resource_id and d.kind is Kind.TEXT and self._is_title(s, d):
                        by_id = "title"
                    # rows of a list share their labels ("More options" on every row): ids first
                    first, second = (by_id, by_label) if d.role == "child" or d.kind in (
                        Kind.TEXT, Kind.LIST, Kind.SCROLLER) else (by_label, by_id)
                    base = first or second
                    alternative = with_suffix(second, d.kind) if second else ""
                d.description = self._element_description(d)
                wanted = base if base == "options" else with_suffix(base, d.kind)
                if self.options.annotator is not None:
                    found = self.options.annotator.element(s.name, f"heuristic name: {wanted}\n{d.description}")
                    if found is not None:
                        d.description = found.description or d.description
                        wanted = slug(found.name, 6) or wanted
                local = namer.unique(wanted, [alternative] if d.role != "list" else [])
                d.name = f"{s.name}__{local}"

    @staticmethod
    def _is_title(s: ScreenDraft, d: ElementDraft) -> bool:
        """Is the text the toolbar title of its screen (in its first sighting)?"""
        first = d.seen[0]
        a = s.group.anatomies[first.state]
        return a.toolbar_title is not None and a.tree.node(first.node).text.strip() == a.toolbar_title

    def _element_description(self, d: ElementDraft) -> str:
        label = d.display
        kind = d.kind.value
        if d.role == "list":
            what = {Kind.CHECKBOX: "choices", Kind.BUTTON: "items"}.get(d.item_kind, "items")
            text = f"A list of {what}"
            if d.examples:
                text += f", e.g. {_quote_list(d.examples)}"
            text += "; pick one with match(label) or an index"
        elif d.kind is Kind.TEXT:
            if d.dynamic:
                seen = list(dict.fromkeys(t for t in d.texts if t))[:3]
                text = f"Text that changes (seen {_quote_list(seen)})"
            else:
                value = _most(d.texts)
                text = f"Text, e.g. '{_clip(value)}'" if value else "Text"
        elif d.kind is Kind.INPUT:
            text = f"Text field '{label}'" if label else "Text field"
        elif d.kind in (Kind.SWITCH, Kind.CHECKBOX):
            text = f"{kind.capitalize()} '{label}'; tap to toggle it" if label else f"A {kind}; tap to toggle it"
        else:
            text = f"{kind.capitalize()} '{label}'" if label else f"A {kind}"
        if d.role == "child":
            text += " (in each item of the list)"
        if not d.always:
            text += "; only shown at times"
        if not d.enabled:
            text += "; was disabled when seen"
        return text + "."

    # -- effects and paths ----------------------------------------------------------------------

    def _effects(self) -> None:
        names = {s.group.index: s.name for s in self.screens}

        returns = self._returns_cache

        def outcome(target: int | None, group: int, kind: Kind) -> str:
            if target is None:
                return "leave the app"
            if (group, target) in returns:
                return "close it"
            if target == group:
                return "toggle it" if kind in (Kind.SWITCH, Kind.CHECKBOX) else "update this screen"
            return f"open the {names[target]}"

        # taps first: a long tap is only mentioned when it does something else
        effects = sorted(forward_effects(self.transitions).items(), key=lambda kv: kv[0][2] != "tap")
        for (group, key, action), counter in effects:
            d = self.drafts[(group, key)]
            if not counter or d.role == "list":
                continue
            target, _ = counter.most_common(1)[0]
            verb = {"text": "type", "long_tap": "long tap"}.get(action, "tap")
            result = outcome(target, group, d.kind)
            if d.effect is not None and d.effect.endswith(" to " + result):
                continue  # a long tap that does what a tap does
            if verb == "tap" and result == "toggle it":
                continue  # a switch's description says so ("...; tap to toggle it")
            phrase = f"{verb} to {result}"
            d.effect = phrase if d.effect is None else f"{d.effect}; {phrase}"
            if target is not None and target != group and action == "tap" and (group, target) not in returns:
                d.leads_to = names[target]
        for (group, key, action), per_label in option_effects(self.transitions).items():
            d = self.drafts[(group, key)]
            if d.role != "list":
                continue
            verb = "long tap" if action == "long_tap" else "tap"
            results = {label: c.most_common(1)[0][0] for label, c in per_label.items()}
            if not d.options:
                # content rows: what tapping one does, whichever row it is
                overall: Counter[int | None] = Counter(results.values())
                target = overall.most_common(1)[0][0]
                phrase = f"{verb} an item to {outcome(target, group, d.item_kind)}"
                if (target is not None and target != group and action == "tap" and len(overall) == 1
                        and (group, target) not in returns):
                    d.leads_to = names[target]
            else:
                # options grouped by what they do: "tap 'Sort by' to open ...; 'Settings' to open ..."
                by_outcome: dict[str, list[str]] = {}
                for label in d.options:
                    if label in results:
                        by_outcome.setdefault(outcome(results[label], group, Kind.BUTTON), []).append(label)
                        there = results[label]
                        if there is not None:
                            d.option_effects[label] = names[there]
                if len(by_outcome) == 1 and len(next(iter(by_outcome.values()))) == len(d.options) > 1:
                    phrase = f"{verb} any option to {next(iter(by_outcome))}"
                else:
                    parts = [" or ".join(f"'{x}'" for x in labels) + f" to {result}"
                             for result, labels in by_outcome.items()]
                    phrase = f"{verb} " + "; ".join(parts) if parts else ""
            if phrase:
                d.effect = phrase if d.effect is None else f"{d.effect}; {phrase}"

    def _step_text(self, t: Transition) -> str | None:
        names = {s.group.index: s.name for s in self.screens}
        if t.action == "back" and t.before is not None:
            return str(Step(names[t.before], "back"))
        if t.element is None or t.before is None:
            return None
        d = self.drafts[(t.before, t.element)]
        verb = "long_tap" if t.action == "long_tap" else "tap"
        if t.action == "text":
            return str(Step(d.name, "set_text", (t.text or "",))) if d.kind is Kind.INPUT else None
        if t.action not in ("tap", "long_tap"):
            return None
        if d.role == "list":
            return str(Step(d.name, verb, match=t.item_label)) if t.item_label else None
        return str(Step(d.name, verb))

    def _costly(self, t: Transition) -> bool:
        """Does the step have side effects (see ``graph``)?"""
        if t.action == "text":
            return True
        if t.element is None or t.before is None:
            return False
        d = self.drafts[(t.before, t.element)]
        if d.sensitive or d.kind in (Kind.SWITCH, Kind.CHECKBOX):
            return True
        if d.role == "list" and (d.item_kind is Kind.CHECKBOX or (t.item_label and self.options.policy.reason(
                t.item_label))):
            return True
        words = set(re.findall(r"[a-z]+", (d.display + " " + (t.item_label or "")).lower()))
        return bool(words & COMMIT_WORDS) or d.resource_id.endswith(":id/button1")

    def _returns(self) -> set[tuple[int, int]]:
        """(dialog or menu, screen) pairs where leaving the dialog goes back to a screen that opens
        it (directly or through one more screen): where such a step leads depends on where the
        dialog was opened from, so it is no way *to* that screen."""
        opens: dict[int, set[int]] = {}
        for t in self.transitions:
            if t.moved and t.before is not None and t.after is not None and t.action != "back":
                opens.setdefault(t.before, set()).add(t.after)
        out: set[tuple[int, int]] = set()
        for t in self.transitions:
            a, b = t.before, t.after
            if a is None or b is None or not t.moved or self.screens[a].group.first.window == "full":
                continue
            near = opens.get(b, set())
            if a in near or any(a in opens.get(c, set()) for c in near):
                out.add((a, b))
        return out

    def _paths(self) -> None:
        returns = self._returns_cache
        forward = [t for t in self.transitions if t.action != "back" and (t.before, t.after) not in returns]
        edges = navigation_edges(forward, self._step_text, self._costly)
        by_screen = screen_paths(edges, self.start, max_length=self.options.max_path_length,
                                 max_paths=self.options.max_paths)
        # a screen reached only by going back somewhere still gets those ways in
        everything = screen_paths(navigation_edges(self.transitions, self._step_text, self._costly), self.start,
                                  max_length=self.options.max_path_length, max_paths=self.options.max_paths)
        for g, paths in everything.items():
            by_screen.setdefault(g, paths)
        self.screen_paths: dict[int, list[list[Edge]]] = by_screen
        best = {g: paths[0] for g, paths in by_screen.items()}
        for s in self.screens:
            if not s.elements:
                continue
            g = s.group.index
            # the screen's ways in go on its first control (else its first element): the navigator
            # uses any element's paths to reach the others of the same screen
            entry = next((d for d in s.elements if d.role != "child" and d.kind not in (Kind.TEXT, Kind.IMAGE)),
                         s.elements[0])
            entry.paths = [[e.step for e in p] for p in by_screen.get(g, [])]
            prefix = [e.step for e in best.get(g, [])]
            if g != self.start and not prefix:
                self.report.warnings.append(f"no recorded way from the start screen to {s.name}")
            for d in s.elements:
                if d.always or d.role == "child":
                    continue
                present = {x.state for x in d.seen}
                steps = appearance_steps(self.transitions, g, present, self._step_text)
                if steps and (g == self.start or prefix):
                    d.paths = d.paths + [[*prefix, step] for step in steps[:2]
                                         if len(prefix) + 1 <= self.options.max_path_length]

    # -- output ---------------------------------------------------------------------------------

    def _assemble(self, indexes: dict[str, TreeIndex]) -> dict[str, Any]:
        app: dict[str, Any] = {"package": self.package,
                               "name": self.options.app_name or self.package.rsplit(".", 1)[-1].capitalize(),
                               "start_screen": self.screens[self.start].name, "dialect": "uiautomator"}
        screens: dict[str, Any] = {}
        for s in self.screens:
            g = s.group
            window_activity = g.activity if g.first.window == "full" else ""
            own = [(indexes[sid], g.anatomies[sid].kept.keys(), frozenset(g.anatomies[sid].in_item))
                   for sid in g.states]
            # with an activity in the signature, only screens over the same activity can be confused
            everyone = [sid for o in self.screens if o is not s for sid in o.group.states]
            others = [indexes[sid] for sid in everyone
                      if not window_activity or self.anatomies[sid].activity == window_activity]
            rest = [indexes[sid] for sid in everyone if window_activity
                    and self.anatomies[sid].activity != window_activity]
            sig = screen_signature(own, others, rest=rest)
            signature: dict[str, Any] = {}
            if window_activity:
                signature["activity"] = _short_activity(window_activity, self.package)
            if sig.all_of:
                signature["all"] = [c.xpath() for c in sig.all_of]
            if sig.none_of:
                signature["none"] = [c.xpath() for c in sig.none_of]
            if sig.ambiguous:
                self.report.warnings.append(f"screen {s.name}: its signature also matches {sig.ambiguous} "
                                            "hierarchies of other screens")
            elements: dict[str, Any] = {}
            list_names = {d.key: d.name for d in s.elements if d.role == "list"}
            kinds: Counter[str] = Counter()
            paths = 0
            for d in s.elements:
                item: dict[str, Any] = {"kind": d.kind.value, "description": d.description,
                                        "identifiers": [c.xpath() for c in d.identifiers]}
                if d.options:
                    item["options"] = list(d.options)
                if d.effect:
                    item["effect"] = d.effect
                if d.leads_to and d.leads_to != s.name:
                    item["leads_to"] = d.leads_to
                if d.role == "child":
                    item["item_of"] = list_names[d.list_key]
                if d.role == "list" and d.item_kind is not Kind.OTHER:
                    item["item_kind"] = d.item_kind.value
                if d.sensitive:
                    item["sensitive"] = True
                if d.paths:
                    item["paths"] = [FlowList(p) for p in d.paths]
                    paths += len(d.paths)
                if d.notes:
                    item["notes"] = "; ".join(d.notes)
                elements[d.name] = item
                kinds[d.kind.value] += 1
                self.report.identifiers += len(d.identifiers)
                if d.sensitive:
                    self.report.sensitive.append(f"{d.name} ({d.sensitive})")
            screens[s.name] = {"description": s.description, "signature": signature, "elements": elements}
            self.report.screens.append(ScreenReport(s.name, len(g.states), len(s.elements), dict(kinds), paths,
                                                    " & ".join(signature.get("all", [])), sig.ambiguous))
            self.report.elements += len(s.elements)
            self.report.paths += paths
            for k, n in kinds.items():
                self.report.kinds[k] = self.report.kinds.get(k, 0) + n
        return {"format": 1, "app": app, "screens": screens}

    def _finish(self, data: dict[str, Any]) -> BuildResult:
        header = (f"Generated by `tapir docgen` from {', '.join(self.report.sources)}.\n"
                  "Edit freely: `tapir docgen --update THIS_FILE` keeps names and hand edits when regenerating.")
        text = to_yaml(data, header)
        result = loads_document(text, source="<generated>")
        if result.document is None:
            raise DocumentError("internal error: the generated document does not validate",
                                list(result.errors), filename="<generated>")
        for p in result.warnings:
            self.report.warnings.append(f"{p.code}: {p.message}")
        return BuildResult(text, result.document, data, self.report, self.screens)


#: Labels too generic to name a screen after ("ok_dialog").
_GENERIC = frozenset({"ok", "yes", "no", "cancel", "done", "close", "back", "navigate_up", "more_options"})


def _most(values: Sequence[str]) -> str:
    found = Counter(v for v in values if v)
    return found.most_common(1)[0][0] if found else ""


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote_list(values: Sequence[str]) -> str:
    return ", ".join(f"'{_clip(v)}'" for v in values)


__all__ = ["BuildOptions", "BuildReport", "BuildResult", "Dropped", "ScreenReport", "build_document"]
