"""Backward-dependency navigation (AutoDroid-V2, Algorithm 1): reaching an element whose
screen is not showing.

Each document element may list dependency paths: action sequences, in execution order, that
lead to it (``[main_screen__menu_button.tap(), menu__settings_item.tap()]``). When a script uses
an element that is not on the current screen, the navigator repeatedly

1. picks, among the element's paths, the one with a step available on the current screen (the
   step's element is on this screen and grounded in the current dump, or the step is
   ``<this screen>.back()``), preferring the step closest to the end of its path (the fewest
   actions left), and
2. executes that path from that step on, one step at a time, re-identifying the screen after
   each action and stopping as soon as the target is present; a step whose screen is not the
   current one ends the attempt (Algorithm 1, line 8), and the next round plans again.

When no path applies, it falls back, in order, on a route through the document's ``leads_to``
links (a breadth-first search from the current screen to the target's), on relaunching the app
when another app is in front, on scrolling, and on BACK. Scrolling: a screen scrolled further is
often a screen of its own in a document (a settings page whose lower half holds other elements,
named after them, with no path to it: what leads there is a swipe, not an element), so before
pressing BACK the navigator scrolls the current screen's largest scroll view down, a page at a
time while it moves (``max_scrolls``), looking for the target's screen, then up the same way (a
script that scrolled past the target's part of the page is below it); only when the two screens
may be one activity (their signatures do not name two different ones). A page with no path of
its own is reached by the paths onto its other pages (``pages_of``: the same activity and scroll
view), and there the swipe comes first. A scroll changes nothing in the app, so reads may take it
too. Everything is bounded: rounds, steps in total, paths
tried and BACK presses (``NavigationConfig``). Navigation stops as soon as the target's screen
is showing (the caller then looks for the element there). Failure raises ``ScreenNotReached``
naming the paths that were tried, the steps refused, and where the device really is.

**What navigation may do** (``step_risk``). Some steps have effects beyond moving between
screens, or choose something the script did not:

* a step on a list item that does not say which item (``$songs__list.tap()``, or an element
  inside an item such as ``$songs__song_more_button.tap()``): which song's menu opens is the
  script's choice, not the navigator's. Where the script made that choice (it matched an item of
  that list, or its loop is at one), the step acts on that item and is no risk
  (``Navigator._chosen_items``);
* a *destructive* step (its element's name, label or matched item says delete, remove, clear,
  reset, discard, sign out...) or a *sensitive* one (send, pay, buy, call, share, install...),
  or a step on an element the document marks ``sensitive: true``;
* typing text (it changes what a form holds).

For a script's **action** (tap, set_text...) such a step is taken only along a path the document
gives for the target element itself (or for its list, for an element inside an item): the
document's author named it for exactly this. Even then a sensitive tap needs the run's
permission (``tapir.runtime.guards``: ``--allow``, or a yes in the REPL), as the script's own
would; a step the guard refuses is passed over for the rest of the navigation, which goes on by
other paths, and only when none reaches the target is the refusal the error. Paths borrowed
from the other elements of the screen, ``leads_to`` routes and chained paths of other elements
never take one. For a script's
**read** (``get_text``, ``get_attributes``, ``len``, indexing, ``match``, iteration) none is ever
taken, and a read never opens a dialog or menu (``transient_screen``): a dialog that is not open
has nothing to read, and opening it would invent the very state the script reads. Such a read
fails at once, without touching the device, naming where the device is. No ``leads_to`` route,
for a read or an action, taps an element that keeps or makes something (``COMMITS``: a form's
Save, an Add button): the route is the navigator's own, and what it would keep is nothing the
script typed (the call button of "some contact" reached through "add contact" and an empty
form's Save). An action's route may tap the Save of the form the script last typed into: that
keeps the script's own text (a note typed, then the note's page named).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from tapir.core.document import AppDocument, Element, Screen, Step
from tapir.core.errors import ActionError, ElementNotFound, ScreenNotReached, SensitiveActionRefused, Span
from tapir.core.kinds import Kind
from tapir.runtime.grounding.fuzzy import words
from tapir.runtime.grounding.identifiers import labels
from tapir.runtime.settle import Observation


@dataclass(frozen=True)
class NavigationConfig:
    """Bounds of Algorithm 1 (upstream uses depth 4 and width 4)."""

    #: Planning rounds (each picks a path and runs it as far as it goes).
    max_rounds: int = 6
    #: Actions in total for one navigation.
    max_steps: int = 14
    #: Different paths tried.
    max_paths: int = 6
    #: BACK presses used as a fallback.
    max_back: int = 3
    #: Longest ``leads_to`` route considered.
    max_route: int = 5
    #: How many paths may be chained: reaching the start of a path through the paths of its
    #: first step's element (upstream's dependency depth).
    max_chain: int = 3
    #: Swipes down the current screen's scroll view, looking for the target's screen, before BACK.
    max_scrolls: int = 4
    #: Planning rounds in all, those of chained paths included: what bounds the search where no
    #: step is taken (a dialog on which BACK changes nothing costs no step once it is known).
    max_plans: int = 40


class NavigationHost(Protocol):
    """What the navigator needs from the session."""

    document: AppDocument

    def observe(self) -> Observation:
        """The current screen (the cached dump when nothing happened since)."""
        ...

    def where(self, obs: Observation) -> str:
        """Where the device is, in words (``'songs_screen'``, ``another app: com.x``...)."""
        ...

    def step_available(self, step: Step, obs: Observation) -> bool:
        """True when ``step`` can be executed on ``obs`` (its element is grounded there)."""
        ...

    def run_step(self, step: Step, obs: Observation, span: Span | None, toward: str | None = None) -> Observation:
        """Execute one path step and return the settled screen after it. ``toward``: the screen the
        step should lead to (the next step's, or the target's), for a step that taps an item of a
        list without naming it (a tab bar, a menu): the item that leads there is taken."""
        ...

    def launch_app(self, span: Span | None) -> Observation:
        """Bring the document's app to the front."""
        ...

    def chosen_item(self, list_name: str) -> str | None:
        """The item of the list the script chose last (the text it matched, or the text of the
        item its loop is at), None when it chose none."""
        ...

    def typed_screen(self) -> str | None:
        """The screen of the script's last ``set_text`` (a route may keep what the script typed
        there), None when it typed nothing."""
        ...

    def scroll_screen(self, obs: Observation, span: Span | None, direction: str = "down") -> Observation | None:
        """Swipe the largest scroll view of ``obs`` toward ``direction`` (``down`` shows what is
        further down, ``up`` what is above); the settled screen after it, or None when there is no
        scroll view or it did not move (its end is showing)."""
        ...

    def handed_over(self, obs: Observation) -> bool:
        """True when another app in front on ``obs`` is one the run's app handed over to (a document
        picker, or an app whose screens the document describes): navigation goes on from there."""
        ...


@dataclass(frozen=True)
class NavStep:
    """One action the navigator took."""

    step: str
    screen_before: str | None
    screen_after: str | None
    #: ``path`` (a document path), ``route`` (leads_to links), ``launch``, ``scroll``, ``back`` or
    #: ``exit`` (a dialog's Cancel or close button, where BACK changed nothing).
    via: str


@dataclass
class Navigation:
    """The record of one navigation (kept in the trace)."""

    target: str
    steps: list[NavStep] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    #: Steps the policy kept the navigator from taking, with why (see the module docstring).
    refused: list[str] = field(default_factory=list)
    #: Where it found no way on, with why (a BACK that changed nothing, the search bound reached).
    stuck: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Plan:
    steps: tuple[Step, ...]
    start: int
    label: str
    via: str


@dataclass(frozen=True)
class DocPath:
    """A dependency path and whether the document gives it for the element being reached
    (its own path, or its list's for an element inside an item) rather than for another
    element of the screen."""

    steps: tuple[Step, ...]
    own: bool


def render_path(steps: tuple[Step, ...]) -> str:
    return "[" + ", ".join(str(s) for s in steps) + "]" if steps else "[]"


# ---------------------------------------------------------------------------------------------
# What navigation may do

#: Words that make a step destructive or sensitive (whole words of the element's name, its
#: labels, or the item a step matches).
DESTRUCTIVE = frozenset({
    "delete", "remove", "erase", "clear", "reset", "discard", "wipe", "uninstall", "format", "empty", "trash",
    "unsubscribe", "revoke", "logout", "signout", "deactivate", "block",
})
SENSITIVE = frozenset({
    "send", "pay", "payment", "purchase", "buy", "checkout", "call", "dial", "donate", "subscribe", "post",
    "publish", "share", "transfer", "install", "submit", "allow", "grant", "accept", "confirm",
})
#: Two-word phrases (sign in/out, log in/out).
_PAIRS = {("sign", "out"), ("log", "out"), ("sign", "in"), ("log", "in")}
#: Words of a screen's name or description that make it transient: opened by an action, gone after.
TRANSIENT = frozenset({"dialog", "menu", "popup", "sheet", "picker", "dropdown", "chooser", "prompt", "snackbar",
                       "toast", "overlay", "tooltip"})


#: Words of a dialog's elements that close it without a choice (a way out where BACK does nothing),
#: and those that close it accepting what it shows (only for actions: they may apply a choice).
DISMISS = frozenset({"cancel", "close", "dismiss", "later", "skip"})
CONFIRM = frozenset({"ok", "done"})
#: Words of an element that keeps or makes something (a form's Save, an Add button): no
#: ``leads_to`` route taps one (reaching a contact's page must not save an empty new contact).
COMMITS = frozenset({*CONFIRM, "save", "apply", "confirm", "create", "submit", "update", "add"})


def _words(text: str) -> list[str]:
    return words(text).split()


def transient_screen(screen: Screen) -> bool:
    """A dialog, menu or popup (by its name): it shows only after an action opened it."""
    return any(w in TRANSIENT for w in _words(screen.name))


#: Words of screen and element names that name no place in particular.
PLACE_NOISE = frozenset({"screen", "main", "button", "list", "item", "items", "dialog", "view", "options", "option",
                         "menu", "popup", "the", "a", "of", "to", "tab", "tabs", "interface", "holder", "text",
                         "label", "icon", "image", "container", "layout", "bar", "toolbar", "title", "with"})


def name_items(document: AppDocument, steps: tuple[Step, ...], goal: str) -> tuple[Step, ...]:
    """``steps`` with each tap on a list that does not say which item given the item it must be:
    the one of the list's documented options whose words name the screen the step leads to (the
    next step's screen, else ``goal``), as a menu's "Settings" leads to ``configure_settings``.
    Recorded paths often say only "a tap on the menu" (DroidBot logs the view, upstream documents
    drop its text); named, such a step is no longer the navigator's own choice of item, and its
    item's words go through ``step_risk`` like a script's ``match``. A step whose options name
    no screen, or two equally, stays as it is."""
    out: list[Step] = []
    for n, step in enumerate(steps):
        el = document.element(step.target) if step.target else None
        if (el is not None and el.is_list and el.options and step.match is None
                and step.action in ("tap", "long_tap")):
            toward = _leads(document, steps[n + 1:], goal)
            option = _option_toward(el, toward)
            page = document.screen(el.screen)
            if (option is None and n == len(steps) - 1 and page is not None and not transient_screen(page)
                    and not _names_any_option(el, toward)):
                # the last step onto the goal from a page's list (a dialog's items all close it, any
                # one leads back), and no recorded option has the goal's name: the item is one the
                # recording never showed (below the fold: Firefox's 'About Firefox'), named by the goal
                option = _title_of(toward)
            if option is not None:
                step = Step(step.target, step.action, step.args, step.line, option)
        out.append(step)
    return tuple(out)


def _leads(document: AppDocument, rest: tuple[Step, ...], goal: str) -> str | None:
    """The screen a step is taken to reach: the next step's (``screen.back()`` names it), else the
    goal; None when a global step (``back()``) comes next."""
    for step in rest:
        if step.target is None:
            return None
        el = document.element(step.target)
        return el.screen if el is not None else step.target
    return goal


_SCREEN_NOISE = frozenset({"screen", "dialog", "popup", "menu", "page", "interface", "the", "a", "of", "to", "with"})


def _screen_words(screen: str) -> set[str]:
    """A screen name's words without its kind's ("Manage shown tabs" names
    manage_visible_tabs_dialog): its widgets' words stay."""
    return set(words(screen).split()) - _SCREEN_NOISE


def _option_toward(el: Element, screen: str | None) -> str | None:
    if screen is None or screen == el.screen:
        return None
    wanted = _screen_words(screen)
    # the most of the screen's words, then the fewest others: "Settings" before "Settings and backup"
    scored = sorted((((len(wanted & said), -len(said - wanted)), o) for o in el.options
                     for said in [set(words(o).split())]), key=lambda t: t[0], reverse=True)
    if not scored or scored[0][0][0] == 0 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def _title_of(screen: str | None) -> str | None:
    """A screen's name as the label of the item that opens it ('about_firefox_screen' -> 'about
    firefox'); None for a name of fewer than two words besides its kind (too plain to look for)."""
    if screen is None:
        return None
    said = [w for w in words(screen).split() if w not in _SCREEN_NOISE]
    return " ".join(said) if len(said) >= 2 else None


def _names_any_option(el: Element, screen: str | None) -> bool:
    """Whether some option of ``el`` shares a word with ``screen``'s name (then the options name it,
    or name it too loosely to choose: either way not an item the recording never showed)."""
    if screen is None:
        return True
    wanted = _screen_words(screen)
    return any(wanted & set(words(o).split()) for o in el.options)


def _scrollers(screen: Screen) -> set[str]:
    return {i.xpath for e in screen.elements if e.kind is Kind.SCROLLER for i in e.identifiers}


def pages_of(document: AppDocument, screen: Screen) -> list[Screen]:
    """The document's other screens that are ``screen``'s page scrolled elsewhere: the same
    activity (named by both signatures; an imported document's screens name none) and a scroll
    view of the same identifier (a settings page's top and its lower half); no dialogs."""
    activity, scrolls = screen.signature.activity, _scrollers(screen)
    if not activity or not scrolls or transient_screen(screen):
        return []
    short = activity.rsplit(".", 1)[-1]
    return [s for s in document.screens if s.name != screen.name and s.signature.activity
            and s.signature.activity.rsplit(".", 1)[-1] == short and not transient_screen(s)
            and scrolls & _scrollers(s)]


def step_risk(document: AppDocument, step: Step) -> str | None:
    """Why navigation should not take ``step`` on its own (see the module docstring), or None."""
    if step.target is None:
        return None
    el = document.element(step.target)
    if el is None:
        return None
    if step.action == "set_text":
        return f"{step} types text"
    said: list[str] = [*_words(el.local_name)]
    if step.match is not None and el.is_list:
        said.extend(_words(step.match))  # the item's words: a list's labels are all its items' ("Share")
    else:
        said.extend(w for label in labels(el.identifiers).words for w in _words(label))
        if step.match is not None:
            said.extend(_words(step.match))
    if el.sensitive or (el.item_of and (parent := document.element(el.item_of)) is not None and parent.sensitive):
        return f"{step} is marked sensitive in the app document"
    if el.item_of is not None and step.action in ("tap", "long_tap") and step.match is None:
        return f"{step} acts on an item of ${el.item_of} without saying which"
    if el.is_list and step.match is None and step.action in ("tap", "long_tap"):
        return f"{step} taps an item of ${el.name} without saying which"
    if el.kind is Kind.TAB and step.match is None:
        return None  # a tab only shows a page: "Call history" or "Trash" on one does not call or delete
    for w in said:
        if w in DESTRUCTIVE:
            return f"{step} is destructive ({w!r})"
        if w in SENSITIVE:
            return f"{step} is sensitive ({w!r})"
    if set(zip(said, said[1:], strict=False)) & _PAIRS:
        return f"{step} signs in or out"
    return None


class Navigator:
    """Runs Algorithm 1 for one session (see the module docstring)."""

    def __init__(self, host: NavigationHost, config: NavigationConfig | None = None) -> None:
        self.host = host
        self.config = config or NavigationConfig()
        self._routes = _leads_to_graph(host.document)
        self._budget = self.config.max_steps
        # attempts that changed nothing are not repeated: (plan label, screen digest)
        self._fruitless: set[tuple[str, str]] = set()
        # screens where one BACK changed nothing (a second may close them: see ``reach``)
        self._backed_once: set[str] = set()
        # steps the sensitive-action guard refused in this navigation: other paths are tried
        self._guarded: dict[Step, SensitiveActionRefused] = {}
        self._read = False
        # elements whose paths were chained to from a screen (name, digest): tried once
        self._chained: set[tuple[str, str]] = set()
        self._plans = 0

    def paths_for(self, element: Element, *, pages: bool = True) -> list[DocPath]:
        """The element's own paths, then its list's (for child elements), then those of the other
        elements of its screen (any way onto the screen is a way to the element); with none of
        those and ``pages``, the ways onto its other pages (``pages_of``)."""
        doc = self.host.document
        out: list[DocPath] = []
        seen: set[tuple[Step, ...]] = set()

        def add(paths: tuple[tuple[Step, ...], ...], own: bool) -> None:
            for p in paths:
                p = self._chosen_items(name_items(doc, p, element.screen), own)
                if p and p not in seen:
                    seen.add(p)
                    out.append(DocPath(p, own))

        add(element.paths, True)
        if element.item_of:
            parent = doc.element(element.item_of)
            if parent is not None:
                add(parent.paths, True)
        screen = doc.screen(element.screen)
        if screen is not None:
            for other in screen.elements:
                if other.name != element.name:
                    add(other.paths, False)
        if not out and pages and screen is not None:
            # a page recorded only scrolled down (the settings' lower half) has no way in of its own:
            # the ways onto its other pages lead there, and navigation then scrolls
            for sibling in pages_of(doc, screen):
                for other in sibling.elements:
                    add(other.paths, False)
        return out

    def _chosen_items(self, steps: tuple[Step, ...], own: bool) -> tuple[Step, ...]:
        """``steps`` with each tap on an element inside a list's items, and (off the element's own
        paths, on a list of a full screen) each tap on a list's item, that names no item given
        the item the script chose of that list (``NavigationHost.chosen_item``): "the song's
        menu" after ``$songs.match("Cinder")``, the contact's page inside ``for item in
        $favourites:``. That is the script's choice, not the navigator's, so the step is no longer
        a risk; a menu's item on its own path stays the one toward the goal (``name_items``)."""
        doc = self.host.document
        out: list[Step] = []
        for step in steps:
            el = doc.element(step.target) if step.target else None
            if el is not None and step.match is None and step.action in ("tap", "long_tap"):
                page = doc.screen(el.screen)
                listed = el.item_of or (el.name if el.is_list and not own and page is not None
                                        and not transient_screen(page) else None)
                chosen = self.host.chosen_item(listed) if listed else None
                if chosen:
                    step = Step(step.target, step.action, step.args, step.line, chosen)
            out.append(step)
        return tuple(out)

    def reach(
        self,
        element: Element,
        arrived: Callable[[Observation], bool],
        span: Span | None = None,
        *,
        read: bool = False,
    ) -> tuple[Observation, Navigation]:
        """Act until ``arrived(screen)`` holds; return the screen and what was done. ``read``:
        the navigation is for a read, which takes no risky step (see the module docstring).

        Raises ``ScreenNotReached`` when the bounds run out first."""
        nav = Navigation(element.name)
        self._budget = self.config.max_steps
        self._fruitless = set()
        self._backed_once = set()
        self._guarded = {}
        self._read = read
        self._chained = set()
        self._plans = 0
        try:
            obs = self._reach(element, arrived, span, nav, depth=0)
        except ScreenNotReached:
            if self._guarded:  # no other way: the refusal says how to allow the step
                raise next(iter(self._guarded.values())) from None
            raise
        return obs, nav

    def allowed(self, step: Step, path: DocPath, nav: Navigation | None = None) -> bool:
        """Whether the policy lets navigation take ``step`` of ``path`` (module docstring)."""
        if step in self._guarded:
            return False
        risk = step_risk(self.host.document, step)
        if risk is None:
            return True
        if path.own and not self._read:
            return True
        if nav is not None:
            why = f"{risk} (reads take no such step)" if self._read else \
                f"{risk} (the path belongs to another element)"
            if why not in nav.refused:
                nav.refused.append(why)
        return False

    def _reach(
        self,
        element: Element,
        arrived: Callable[[Observation], bool],
        span: Span | None,
        nav: Navigation,
        depth: int,
    ) -> Observation:
        cfg = self.config
        obs = self.host.observe()
        if arrived(obs):
            return obs
        # only the script's own target is looked for on another page: a path's first step is
        # reached on the screens the document says it is taken on
        paths = self.paths_for(element, pages=depth == 0)
        backs = 0
        launched = False
        scrolled = False
        chained: set[str] = set()
        for _ in range(cfg.max_rounds):
            if self._budget <= 0:
                break
            if self._plans >= cfg.max_plans:
                gave_up = f"gave up after {cfg.max_plans} planning rounds"
                if gave_up not in nav.stuck:
                    nav.stuck.append(gave_up)
                break
            self._plans += 1
            if (obs.package and obs.package != self.host.document.app.package and not launched
                    and not self.host.handed_over(obs)):
                before = obs.screen
                obs = self.host.launch_app(span)
                launched = True
                nav.steps.append(NavStep(f"launch {self.host.document.app.package}", before, obs.screen, "launch"))
                if arrived(obs):
                    return obs
                continue
            if (not scrolled and depth == 0 and not self._way_in(element.screen)
                    and obs.screen in self._pages(element.screen)):
                # on another page of its scroll view, a page with no way in of its own is further down
                scrolled = True
                obs, found = self._scroll_to(arrived, obs, span, nav)
                if found:
                    return obs
            plan = self._plan(element, paths, obs, nav, fruitless=self._fruitless)
            if plan is None and depth < cfg.max_chain:
                # no path starts here: first reach the screen where one of them starts
                obs, progressed = self._chain(paths, obs, span, nav, depth, chained, arrived)
                if arrived(obs):
                    return obs
                if progressed:
                    continue
            if plan is None and not scrolled and self._same_activity(obs.screen, element.screen):
                scrolled = True  # once per navigation: the screen is scrolled as far as it goes
                obs, found = self._scroll_to(arrived, obs, span, nav)
                if found:
                    return obs
                continue
            if plan is None:
                start = self.host.document.app.start_screen
                if obs.screen in (element.screen, start):
                    break
                if backs < cfg.max_back and ("back()", obs.digest) not in self._fruitless:
                    backs += 1
                    before_obs = obs
                    obs = self.host.run_step(Step(None, "back"), obs, span)
                    self._budget -= 1
                    nav.steps.append(NavStep("back()", before_obs.screen, obs.screen, "back"))
                    if arrived(obs):
                        return obs
                    if obs.digest == before_obs.digest:
                        # once more: the first BACK may only have hidden the keyboard (a dialog with a
                        # text field), which the hierarchy does not show; after that, not again here
                        if obs.digest in self._backed_once:
                            self._fruitless.add(("back()", obs.digest))
                            nav.stuck.append(f"back() changed nothing on {self.host.where(obs)}")
                        self._backed_once.add(obs.digest)
                    continue
                # BACK is spent or does nothing: a dialog's own way out (Cancel, close)
                plan = self._way_out(obs, nav)
                if plan is None:
                    break
            obs, done = self._run(plan, element, arrived, obs, span, nav)
            if done:
                return obs
        if depth > 0:
            return obs
        raise self._failure(element, obs, nav, paths)

    def _run(self, plan: _Plan, element: Element, arrived: Callable[[Observation], bool], obs: Observation,
             span: Span | None, nav: Navigation) -> tuple[Observation, bool]:
        """Run ``plan`` from its start step while its steps are available; (screen, arrived)."""
        if plan.label not in nav.tried:
            nav.tried.append(plan.label)
        start_digest = obs.digest
        steps = plan.steps[plan.start:]
        for n, step in enumerate(steps):
            if self._budget <= 0 or not self.host.step_available(step, obs):
                break
            before_obs = obs
            try:
                obs = self.host.run_step(step, obs, span, toward=self._toward(steps[n + 1:], element))
            except (ActionError, ElementNotFound):
                break  # a step that cannot be done here ends the attempt; plan again
            except SensitiveActionRefused as exc:
                # the guard kept the tap from the device: another path may go around it
                self._guarded.setdefault(step, exc)
                break
            self._budget -= 1
            nav.steps.append(NavStep(str(step), before_obs.screen, obs.screen, plan.via))
            if arrived(obs):
                return obs, True
            if obs.digest == before_obs.digest:
                # many paths share a step (a dialog's list, tapped first): one that changed nothing
                # here is not taken again here, whichever path it comes in
                self._fruitless.add((f"step {step}", obs.digest))
        if obs.digest == start_digest:
            self._fruitless.add((plan.label, start_digest))
            if plan.via == "exit":
                nav.stuck.append(f"{plan.label} changed nothing on {self.host.where(obs)}")
        return obs, False

    def reveal(self, element: Element, arrived: Callable[[Observation], bool], span: Span | None = None, *,
               read: bool = False) -> tuple[Observation, Navigation] | None:
        """On the element's own screen, where the element is not shown: run the element's own paths
        (its list's, for an element inside an item) from a step available here, as the document
        says it is shown (the tab that shows a list, even the selected one, which reloads it). No
        route, BACK or borrowed path: the screen is the right one. None when no own path has a
        step here (nothing was done); else the screen and what was done, arrived or not."""
        nav = Navigation(element.name)
        self._budget = self.config.max_steps
        self._fruitless = set()
        self._backed_once = set()
        self._guarded = {}
        self._read = read
        own = [p for p in self.paths_for(element) if p.own]
        obs = self.host.observe()
        for _ in range(self.config.max_rounds):
            plan = self._plan(element, own, obs, nav, fruitless=self._fruitless, routes=False)
            if plan is None or self._budget <= 0:
                break
            obs, done = self._run(plan, element, arrived, obs, span, nav)
            if done:
                break
        if not nav.tried:
            return None
        if not nav.steps and self._guarded:  # the guard refused the way: say how to allow it
            raise next(iter(self._guarded.values()))
        return obs, nav

    def _pages(self, screen: str) -> set[str]:
        found = self.host.document.screen(screen)
        return {s.name for s in pages_of(self.host.document, found)} if found is not None else set()

    def _way_in(self, screen: str) -> bool:
        """Whether some element of ``screen`` has a dependency path of its own."""
        found = self.host.document.screen(screen)
        return found is not None and any(e.paths for e in found.elements)

    def _same_activity(self, here: str | None, goal: str) -> bool:
        """Whether screen ``goal`` may be screen ``here`` scrolled further: both are known, they are
        not the same screen (that one's element is absent, not further down), and their signatures
        do not name two different activities (imported documents name none)."""
        doc = self.host.document
        a, b = doc.screen(here) if here else None, doc.screen(goal)
        if a is None or b is None or a.name == b.name or transient_screen(b):
            return False
        acts = a.signature.activity, b.signature.activity
        return None in acts or acts[0].rsplit(".", 1)[-1] == acts[1].rsplit(".", 1)[-1]  # type: ignore[union-attr]

    def _scroll_to(self, arrived: Callable[[Observation], bool], obs: Observation, span: Span | None,
                   nav: Navigation) -> tuple[Observation, bool]:
        """Scroll down, a swipe at a time while the view moves, until ``arrived``; then, when the
        bottom showed without it, up the same way: the current screen may be the target's scrolled
        further down (the script scrolled past it), where BACK leaves the activity; (screen, found)."""
        for direction in ("down", "up"):
            for _ in range(self.config.max_scrolls):
                if self._budget <= 0:
                    return obs, False
                after = self.host.scroll_screen(obs, span, direction)
                if after is None:
                    break
                self._budget -= 1
                nav.steps.append(NavStep(f"scroll({direction!r})", obs.screen, after.screen, "scroll"))
                obs = after
                if arrived(obs):
                    return obs, True
        return obs, False

    def _toward(self, rest: tuple[Step, ...], element: Element) -> str | None:
        """The screen a step should lead to (``_leads``, toward the target's screen)."""
        return _leads(self.host.document, rest, element.screen)

    def _chain(
        self,
        paths: list[DocPath],
        obs: Observation,
        span: Span | None,
        nav: Navigation,
        depth: int,
        chained: set[str],
        arrived: Callable[[Observation], bool],
    ) -> tuple[Observation, bool]:
        """Reach the element of the first step of some path (its own paths), so that the path can
        start; True when one was reached (or the navigation's target showed on the way)."""
        doc = self.host.document
        for path in paths:
            first = path.steps[0]
            target = doc.element(first.target) if first.target else None
            if target is None or target.name in chained or target.screen == obs.screen:
                continue
            if (target.name, obs.digest) in self._chained:
                continue  # tried from this very screen already: it would fail the same way
            self._chained.add((target.name, obs.digest))
            if not all(self.allowed(s, path, nav) for s in path.steps):
                continue  # the path itself could not be run
            chained.add(target.name)

            def can_start(o: Observation, step: Step = first) -> bool:
                # the target itself may show on the way (a dialog closed onto its screen)
                return self.host.step_available(step, o) or arrived(o)

            reached = self._reach(target, can_start, span, nav, depth + 1)
            if arrived(reached) or self.host.step_available(first, reached):
                return reached, True
            obs = reached
        return obs, False

    # -- planning -------------------------------------------------------------------------------

    def _plan(
        self,
        element: Element,
        paths: list[DocPath],
        obs: Observation,
        nav: Navigation,
        fruitless: set[tuple[str, str]],
        routes: bool = True,
    ) -> _Plan | None:
        best: tuple[int, int, int] | None = None
        chosen: _Plan | None = None
        tried_new = len(nav.tried)
        for order, path in enumerate(paths):
            steps = path.steps
            label = render_path(steps)
            if (label, obs.digest) in fruitless:
                continue
            if label not in nav.tried and tried_new >= self.config.max_paths:
                continue
            # the available step closest to the end of the path: fewest actions left
            for i in range(len(steps) - 1, -1, -1):
                step = steps[i]
                if step.target is None and i > 0:
                    continue  # a global step mid-path depends on what came before it
                if not self.host.step_available(step, obs) or (f"step {step}", obs.digest) in fruitless:
                    continue
                if not all(self.allowed(s, path, nav) for s in steps[i:]):
                    break
                # global steps (back(), enter()) are available anywhere: least preferred
                rank = (1 if step.target is None else 0, len(steps) - i, order)
                if best is None or rank < best:
                    best, chosen = rank, _Plan(steps, i, label, "path")
                break
        if chosen is not None or not routes:
            return chosen
        route = self._route(obs.screen, element.screen)
        if route is not None:
            label = "route " + render_path(route)
            if (label, obs.digest) not in fruitless and route and self.host.step_available(route[0], obs):
                return _Plan(route, 0, label, "route")
        return None

    def _way_out(self, obs: Observation, nav: Navigation) -> _Plan | None:
        """A tap that closes the dialog or menu showing, where BACK does nothing: its element whose
        name or label says cancel or close, else (not for reads) OK or done; None on a full screen,
        or when none is available here or each was tapped here without effect."""
        doc = self.host.document
        screen = doc.screen(obs.screen) if obs.screen else None
        if screen is None or not transient_screen(screen):
            return None
        ranked: list[tuple[int, int, Step]] = []
        why = f"no element of {screen.name!r} closes it"
        for order, el in enumerate(screen.elements):
            if el.item_of or el.is_list:
                continue
            said = {*_words(el.local_name), *(w for label in labels(el.identifiers).words for w in _words(label))}
            rank = 0 if said & DISMISS else 1 if said & CONFIRM and not self._read else None
            if rank is not None:
                ranked.append((rank, order, Step(el.name, "tap")))
        for _, _, step in sorted(ranked, key=lambda r: r[:2]):
            label = render_path((step,))
            if (label, obs.digest) in self._fruitless or step_risk(doc, step) is not None or step in self._guarded:
                continue
            if self.host.step_available(step, obs):
                return _Plan((step,), 0, label, "exit")
        if not ranked and why not in nav.stuck:
            nav.stuck.append(why)
        return None

    def _route(self, start: str | None, goal: str) -> tuple[Step, ...] | None:
        """The shortest chain of taps on elements with ``leads_to`` from ``start`` to ``goal``
        (never through a risky element: routes are not the document's paths)."""
        if start is None or start == goal:
            return None
        queue: deque[tuple[str, tuple[Step, ...]]] = deque([(start, ())])
        seen = {start}
        while queue:
            screen, steps = queue.popleft()
            if len(steps) >= self.config.max_route:
                continue
            for target, element in self._routes.get(screen, ()):
                if target in seen:
                    continue
                (step,) = self._chosen_items((Step(element, "tap"),), own=False)
                if step_risk(self.host.document, step) is not None or step in self._guarded:
                    continue
                if self._commits(element) and (self._read or self._screen_of(element) != self.host.typed_screen()):
                    continue  # Save keeps what the script typed on its form; elsewhere it makes something
                route = (*steps, step)
                if target == goal:
                    return route
                seen.add(target)
                queue.append((target, route))
        return None

    def _screen_of(self, name: str) -> str | None:
        el = self.host.document.element(name)
        return el.screen if el is not None else None

    def _commits(self, name: str) -> bool:
        """Whether tapping element ``name`` keeps or makes something (``COMMITS``: its name's or
        its labels' words)."""
        el = self.host.document.element(name)
        if el is None:
            return False
        said = {*_words(el.local_name), *(w for label in labels(el.identifiers).words for w in _words(label))}
        return bool(said & COMMITS)

    def _failure(self, element: Element, obs: Observation, nav: Navigation, paths: list[DocPath]) -> ScreenNotReached:
        where = self.host.where(obs)
        if nav.tried:
            tried = "; ".join(nav.tried[:6]) + (f" (and {len(nav.tried) - 6} more)" if len(nav.tried) > 6 else "")
            how = f"tried {tried}"
        elif nav.refused:
            how = "no path can be taken"
        elif paths:
            how = f"none of its {len(paths)} dependency path(s) starts with an action possible on {where}"
        else:
            how = "the document gives no dependency path to it"
        if nav.refused:
            how += "; not taken: " + "; ".join(nav.refused[:3]) + (
                f" (and {len(nav.refused) - 3} more)" if len(nav.refused) > 3 else "")
        if nav.stuck:
            how += "; stuck: " + "; ".join(dict.fromkeys(nav.stuck))
        done = f" after {len(nav.steps)} navigation step(s)" if nav.steps else ""
        hint = ("add a dependency path to the element in the app document, or make the script "
                f"navigate to {element.screen!r} first")
        if nav.refused:
            hint = f"make the script open {element.screen!r} itself (saying which item, when a list is in the way)"
        return ScreenNotReached(
            f"could not reach screen {element.screen!r} for ${element.name}{done}: {how}; the device shows {where}",
            hint=hint,
        )


def _leads_to_graph(doc: AppDocument) -> dict[str, list[tuple[str, str]]]:
    """screen -> [(screen it leads to, element to tap)], in document order. Lists and their
    children are in it too: a route takes one only on the item the script chose of that list
    (``Navigator._chosen_items``; which item to tap is not the navigator's to know)."""
    graph: dict[str, list[tuple[str, str]]] = {}
    for e in doc.elements:
        if e.leads_to and e.leads_to != e.screen:
            graph.setdefault(e.screen, []).append((e.leads_to, e.name))
    return graph
