"""Notes: text notes and checklists (``org.tapir.notes``).

An interruption for watchers to dismiss, off unless asked for: started with the launch extra
``rate_prompt_after=N`` (``am start ... --ei rate_prompt_after N``, a script's
``launch_app(args={"rate_prompt_after": N})``), the app asks "Enjoying Notes?" after every N
saved notes until it is rated, in a dialog BACK does not close. ``pm clear`` forgets the switch,
like any app setting.

The Account screen (overflow menu, Account) signs in to a pretend sync service: an email field,
a password field (``password="true"`` in the dump, shown as dots, as Android reports it) and Sign
in; signed in, it shows the account and Sign out. ``state.password`` keeps what was typed, so
tests can tell that a secret reached the app while every trace and report shows ``*****``.

Deep links: ``tapirnotes://note/ID``, ``tapirnotes://new`` and ``tapirnotes://account`` (``open_link``).

The element ids are the contract with ``samples/notes/ELEMENTS.md``: keep them stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from tapir.sim.toolkit import (
    Button,
    CheckBox,
    Column,
    Dialog,
    Image,
    ImageButton,
    Input,
    ListItem,
    ListView,
    Menu,
    MenuItem,
    Row,
    Screen,
    Text,
    Toolbar,
    ToolkitApp,
    dialog,
    menu,
    screen,
)

SORTS = ("Date modified", "Title")


@dataclass
class Item:
    text: str
    checked: bool = False


@dataclass
class Note:
    id: int
    title: str
    body: str = ""
    items: list[Item] | None = None
    modified: int = 0

    @property
    def is_checklist(self) -> bool:
        return self.items is not None

    def preview(self) -> str:
        if self.items is not None:
            done = sum(i.checked for i in self.items)
            return f"{done} of {len(self.items)} done"
        return self.body.split("\n")[0]


@dataclass
class NotesState:
    notes: list[Note]
    next_id: int
    sort: str = "Date modified"
    #: Ask to be rated after this many saves (None: never; set by the launch extra).
    rate_prompt_after: int | None = None
    saves: int = 0
    rated: bool = False
    #: The signed-in account (None: signed out) and the password it signed in with.
    account: str | None = None
    password: str | None = None
    account_error: str = ""

    def note(self, note_id: int) -> Note:
        return next(n for n in self.notes if n.id == note_id)


def _initial_notes() -> list[Note]:
    day = 86400
    notes = [
        Note(1, "Shopping list", items=[Item("Milk"), Item("Eggs", True), Item("Bread"), Item("Coffee beans"),
                                        Item("Tomatoes")]),
        Note(2, "Meeting notes", "Budget review moved to Thursday.\nAsk Priya about the Q3 numbers."),
        Note(3, "Book recommendations", "The Left Hand of Darkness\nPiranesi\nThe Overstory"),
        Note(4, "Packing for Lisbon", items=[Item("Passport", True), Item("Charger"), Item("Sunscreen"),
                                             Item("Rain jacket")]),
        Note(5, "Garden ideas", "Move the rosemary to the sunny corner. Try tomatoes in pots this year."),
        Note(6, "Wi-Fi at the cabin", "Network: Pinecone\nPassword is on the fridge."),
        Note(7, "Recipe: lentil soup", "Red lentils, carrots, cumin, lemon. 25 minutes."),
        Note(8, "Gift ideas", "Mum: pottery class\nLeo: climbing shoes"),
        Note(9, "Workout plan", "Mon: run 5 km\nWed: climbing\nFri: yoga"),
        Note(10, "Car service", "Booked for the 21st, 9:00. Winter tyres."),
        Note(11, "Podcast list", "Hardcore History\nThe Daily\nSong Exploder"),
        Note(12, "Passwords hint", "Ask Sam, not in this app."),
    ]
    for n, note in enumerate(notes):
        note.modified = -(n + 1) * day  # older the further down: the list starts newest first
    return notes


class NotesApp(ToolkitApp):
    package = "org.tapir.notes"
    label = "Notes"
    launch_screen = "notes"
    drift_texts = {
        "New note": ("Add note", "Create note"),
        "New checklist": ("Add checklist",),
        "Add item": ("New item",),
        "Discard": ("Don't save",),
        "Keep editing": ("Continue editing",),
    }

    def initial_state(self) -> NotesState:
        return NotesState(_initial_notes(), next_id=13)

    #: Deep links (``am start -a android.intent.action.VIEW -d tapirnotes://note/3``): ``open_link``.
    link_schemes = ("tapirnotes",)

    def open_link(self, uri: str) -> None:
        """``tapirnotes://note/ID`` opens a note, ``tapirnotes://new`` the editor and
        ``tapirnotes://account`` the account screen, each over the notes list (BACK returns to it);
        anything else shows the list."""
        head, _, rest = uri.split("://", 1)[-1].strip("/").partition("/")
        self.launch()
        if head == "note" and rest.isdigit() and any(n.id == int(rest) for n in self.state.notes):
            self.open("note", note=int(rest))
        elif head == "new":
            self.open("edit_note")
        elif head == "account":
            self.open("account")

    def on_intent(self, extras: dict[str, str]) -> None:
        value = extras.get("rate_prompt_after")
        if value is not None:
            self.state.rate_prompt_after = int(value) if value.isdigit() and int(value) > 0 else None

    # ------------------------------------------------------------------------------------ behaviour

    def sorted_notes(self) -> list[Note]:
        if self.state.sort == "Title":
            return sorted(self.state.notes, key=lambda n: n.title.casefold())
        return sorted(self.state.notes, key=lambda n: -n.modified)

    def edited_label(self, note: Note) -> str:
        if note.modified >= 0:
            hours, minutes = divmod(note.modified // 60 % 1440, 60)
            return f"Edited today, {hours:02d}:{minutes:02d}"
        days = -note.modified // 86400 + (1 if -note.modified % 86400 else 0)
        return "Edited yesterday" if days == 1 else f"Edited {days} days ago"

    def save_note(self, note: int | None, checklist: bool) -> None:
        title = self.field("title").strip()
        body = self.field("body").rstrip()
        if not title and not body and note is None and not checklist:
            self.toast("Empty note discarded")
            self.back()
            return
        title = title or body.split("\n")[0][:30] or "Untitled"
        if note is None:
            new = Note(self.state.next_id, title, body, items=[] if checklist else None, modified=self.now)
            self.state.next_id += 1
            self.state.notes.append(new)
            self.switch("note", note=new.id)
        else:
            target = self.state.note(note)
            target.title, target.modified = title, self.now
            if not target.is_checklist:
                target.body = body
            self.back()
        self.state.saves += 1
        every = self.state.rate_prompt_after
        if every and not self.state.rated and self.state.saves % every == 0:
            self.open("rate_app")

    def rate(self) -> None:
        self.state.rated = True
        self.close()
        self.toast("Thanks for rating Notes!")

    def leave_editor(self, note: int | None) -> None:
        original = self.state.note(note) if note is not None else None
        changed = (self.field("title") != (original.title if original else "")
                   or self.field("body") != (original.body if original else ""))
        if changed:
            self.open("discard_changes")
        else:
            self.back()

    def discard(self) -> None:
        self.close()
        self.back()

    def remove_note(self, note: int) -> None:
        self.state.notes = [n for n in self.state.notes if n.id != note]
        self.close_all()
        if self.current_screen == "note":
            self.back()
        self.toast("Note deleted")

    def toggle_item(self, note: int, index: int) -> None:
        target = self.state.note(note)
        assert target.items is not None
        target.items[index].checked = not target.items[index].checked
        target.modified = self.now

    def add_item(self, note: int) -> None:
        text = self.field("new_item").strip()
        target = self.state.note(note)
        if text and target.items is not None:
            target.items.append(Item(text))
            target.modified = self.now
            self.set_field("new_item", "")

    def delete_item(self, note: int, index: int) -> None:
        target = self.state.note(note)
        assert target.items is not None
        del target.items[index]
        target.modified = self.now

    def choose_sort(self, sort: str) -> None:
        self.state.sort = sort
        self.close()

    def sign_in(self) -> None:
        email, password = self.field("email").strip(), self.field("password")
        if not email or not password:
            self.state.account_error = "Enter your email and password"
            return
        self.state.account, self.state.password, self.state.account_error = email, password, ""
        self.toast("Signed in")

    def sign_out(self) -> None:
        self.state.account = self.state.password = None
        self.set_field("email", "")
        self.set_field("password", "")
        self.toast("Signed out")

    # ------------------------------------------------------------------------------------ screens

    @screen(".activities.MainActivity")
    def notes(self) -> Screen:
        return Screen(
            toolbar=Toolbar(
                title="Notes",
                actions=[ImageButton(id="new_checklist", desc="New checklist", kind="action",
                                     on_tap=partial(self.open, "edit_note", checklist=True))],
                menu=[MenuItem("Sort by", on_tap=partial(self.open, "sort_notes")),
                      MenuItem("Account", on_tap=partial(self.open, "account"))],
            ),
            body=[ListView(
                id="notes_list",
                empty=Text("No notes yet. Tap + to write one.", id="notes_empty"),
                items=[
                    ListItem(
                        id="note_item",
                        on_tap=partial(self.open, "note", note=n.id),
                        on_long_tap=partial(self.open, "note_options", note=n.id),
                        children=[
                            Column(children=[
                                Text(n.title, id="note_title", max_lines=1),
                                Text(n.preview(), id="note_preview", style="caption", max_lines=1),
                                Text(self.edited_label(n), id="note_modified", style="caption"),
                            ]),
                            Image(id="note_checklist_icon", size=63) if n.is_checklist else None,
                        ],
                    )
                    for n in self.sorted_notes()
                ],
            )],
            fab=ImageButton(id="fab_new_note", desc="New note", on_tap=partial(self.open, "edit_note")),
        )

    @screen(".activities.NoteActivity")
    def note(self, note: int) -> Screen:
        n = self.state.note(note)
        toolbar = Toolbar(
            title=n.title,
            nav=self.back,
            actions=[
                ImageButton(id="edit_note", desc="Edit", kind="action",
                            on_tap=partial(self.open, "edit_note", note=n.id)),
                ImageButton(id="delete_note", desc="Delete", kind="action",
                            on_tap=partial(self.open, "delete_note", note=n.id)),
            ],
        )
        if n.items is None:
            return Screen(toolbar=toolbar, body=[
                Column(pad_x=42, pad_y=21, children=[
                    Text(n.body or "This note is empty", id="note_body"),
                    Text(self.edited_label(n), id="note_modified", style="caption"),
                ]),
            ])
        items = [
            ListItem(id="checklist_item", children=[
                CheckBox(item.text, id="checklist_item_checkbox", checked=item.checked,
                         on_tap=partial(self.toggle_item, n.id, i)),
                ImageButton(id="checklist_item_delete", desc="Delete item", on_tap=partial(self.delete_item, n.id, i)),
            ])
            for i, item in enumerate(n.items)
        ]
        done = sum(i.checked for i in n.items)
        return Screen(
            toolbar=toolbar,
            body=[
                Row(pad_x=42, pad_y=12, children=[
                    Text(f"{done} of {len(n.items)} done", id="checklist_progress", style="caption")]),
                ListView(id="checklist", items=items, empty=Text("No items yet", id="checklist_empty")),
            ],
            bottom=[Row(pad_x=42, pad_y=12, children=[
                Input(name="new_item", id="new_item_input", hint="Add item", on_submit=partial(self.add_item, n.id)),
                ImageButton(id="add_item", desc="Add item", on_tap=partial(self.add_item, n.id)),
            ])],
        )

    @screen(".activities.EditActivity")
    def edit_note(self, note: int | None = None, checklist: bool = False) -> Screen:
        existing = self.state.note(note) if note is not None else None
        is_checklist = existing.is_checklist if existing else checklist
        title = "Edit note" if existing else ("New checklist" if is_checklist else "New note")
        return Screen(
            toolbar=Toolbar(
                title=title,
                nav=partial(self.leave_editor, note),
                actions=[ImageButton(id="save_note", desc="Save", kind="action",
                                     on_tap=partial(self.save_note, note, is_checklist))],
            ),
            body=[Column(pad_x=42, pad_y=21, children=[
                Input(name="title", id="note_title_input", hint="Title", value=existing.title if existing else "",
                      autofocus=True),
                None if is_checklist else Input(name="body", id="note_body_input", hint="Note",
                                                value=existing.body if existing else "", lines=8),
                Text("Add items after saving", id="checklist_hint", style="caption") if is_checklist and not existing
                else None,
            ])],
            on_back=partial(self.leave_editor, note),
        )

    @screen(".activities.AccountActivity")
    def account(self) -> Screen:
        signed_in = self.state.account
        return Screen(
            toolbar=Toolbar(title="Account", nav=self.back),
            body=[Column(pad_x=42, pad_y=21, children=[
                Text(f"Signed in as {signed_in}" if signed_in else "Sign in to sync your notes", id="account_status"),
                None if signed_in else Input(name="email", id="email_input", hint="Email"),
                None if signed_in else Input(name="password", id="password_input", hint="Password", password=True),
                Text(self.state.account_error, id="account_error", style="caption")
                if self.state.account_error and not signed_in else None,
                Button("Sign out", id="sign_out_button", on_tap=self.sign_out) if signed_in else
                Button("Sign in", id="sign_in_button", on_tap=self.sign_in),
            ])],
        )

    # ------------------------------------------------------------------------------------ menus and dialogs

    @menu
    def note_options(self, note: int) -> Menu:
        return Menu(items=[
            MenuItem("Open", on_tap=partial(self.open, "note", note=note)),
            MenuItem("Edit", on_tap=partial(self.open, "edit_note", note=note)),
            MenuItem("Delete", on_tap=partial(self.open, "delete_note", note=note)),
        ])

    @dialog
    def delete_note(self, note: int) -> Dialog:
        return self.confirm_dialog("Delete note?", f"“{self.state.note(note).title}” will be deleted permanently.",
                                   ("Delete", partial(self.remove_note, note)))

    @dialog
    def discard_changes(self) -> Dialog:
        return self.confirm_dialog("Discard changes?", "Your changes to this note will be lost.",
                                   ("Discard", self.discard), cancel="Keep editing")

    @dialog
    def rate_app(self) -> Dialog:
        return self.confirm_dialog(
            "Enjoying Notes?", "Tap Rate now to leave a review in the store. It takes a minute.",
            ("Rate now", self.rate), cancel="Not now",
            cancelable=False,  # as such prompts often are: BACK does not close it, only an answer does
        )

    @dialog
    def sort_notes(self) -> Dialog:
        return self.choice_dialog("Sort by", "sort_radio_group", SORTS, self.state.sort, self.choose_sort)
