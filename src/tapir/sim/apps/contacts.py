"""Contacts: a scrolling address book with search, favourites and editing (``org.tapir.contacts``).

The element ids are the contract with ``samples/contacts/ELEMENTS.md``: keep them stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from tapir.sim.toolkit import (
    Column,
    Dialog,
    Image,
    ImageButton,
    Input,
    ListItem,
    ListView,
    MenuItem,
    Row,
    Screen,
    Tab,
    Tabs,
    Text,
    Toolbar,
    ToolkitApp,
    dialog,
    screen,
)

# first | last | phone | email (invented people; 555-01xx numbers are reserved for fiction)
PEOPLE = """
Aaliyah | Brooks | +1 555-0101 | aaliyah.brooks@example.com
Ahmed | Karimi | +1 555-0102 | ahmed.k@example.org
Anna | Schmidt | +49 30 5550103 | anna.schmidt@example.de
Ben | Okafor | +1 555-0104 |
Camille | Laurent | +33 1 55 50 01 05 | camille@example.fr
Carlos | Mendoza | +1 555-0106 | carlos.mendoza@example.com
Chen | Wei | +86 10 5550 0107 | chen.wei@example.cn
Dana | Whitfield | +1 555-0108 | dana.w@example.com
Diego | Fernández | +34 91 555 0109 |
Elena | Petrova | +1 555-0110 | elena.petrova@example.com
Emma | Johansson | +46 8 555 011 11 | emma.j@example.se
Farah | Haddad | +1 555-0112 | farah@example.com
Felix | Braun | +49 89 5550113 |
Grace | Kim | +1 555-0114 | grace.kim@example.com
Hannah | Cohen | +1 555-0115 | hannah.cohen@example.com
Hiroshi | Tanaka | +81 3 5550 0116 | hiroshi.t@example.jp
Ines | Costa | +351 21 555 0117 | ines.costa@example.pt
Isaac | Mensah | +1 555-0118 |
Jonas | Weber | +1 555-0119 | jonas@example.com
Julia | Rossi | +39 06 5550 0120 | julia.rossi@example.it
Kai | Nakamura | +1 555-0121 | kai.n@example.com
Laila | Ahmadi | +1 555-0122 | laila.ahmadi@example.com
Leo | Martin | +1 555-0123 |
Maya | Patel | +1 555-0124 | maya.patel@example.com
Mia | Novak | +1 555-0125 | mia.novak@example.com
Noah | Williams | +1 555-0126 | noah.w@example.com
Olivia | Garcia | +1 555-0127 | olivia.garcia@example.com
Omar | Said | +1 555-0128 |
Priya | Sharma | +91 22 5550 0129 | priya.sharma@example.in
Quinn | Taylor | +1 555-0130 | quinn@example.com
Rafael | Souza | +55 11 5550 0131 | rafael.souza@example.br
Sara | Lindqvist | +1 555-0132 | sara.l@example.com
Tom | Becker | +1 555-0133 | tom.becker@example.com
Yuki | Sato | +1 555-0134 | yuki.sato@example.com
"""

SORTS = ("First name", "Last name")


@dataclass
class Contact:
    id: int
    first: str
    last: str = ""
    phone: str = ""
    email: str = ""
    favourite: bool = False

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}".strip()


@dataclass
class ContactsState:
    contacts: list[Contact]
    next_id: int
    sort: str = "First name"
    calls: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    shared: list[int] = field(default_factory=list)

    def contact(self, contact_id: int) -> Contact:
        return next(c for c in self.contacts if c.id == contact_id)


def parse_people(text: str = PEOPLE) -> list[Contact]:
    people = []
    for i, line in enumerate(line for line in text.strip().splitlines() if line.strip()):
        first, last, phone, email = (part.strip() for part in line.split("|"))
        people.append(Contact(i + 1, first, last, phone, email))
    return people


def email_problem(email: str) -> str:
    email = email.strip()
    if email and ("@" not in email or "." not in email.split("@")[-1] or " " in email):
        return "Enter a valid email address"
    return ""


class ContactsApp(ToolkitApp):
    package = "org.tapir.contacts"
    label = "Contacts"
    launch_screen = "contacts"
    drift_texts = {
        "Create new contact": ("Add contact", "New contact"),
        "Add to favourites": ("Favourite", "Star"),
        "Remove from favourites": ("Unfavourite", "Unstar"),
        "Send SMS": ("Message", "Send message"),
        "Favourites": ("Starred",),
    }

    def initial_state(self) -> ContactsState:
        people = parse_people()
        for c in people:
            c.favourite = c.first in ("Anna", "Maya", "Tom")
        return ContactsState(people, next_id=len(people) + 1)

    # ------------------------------------------------------------------------------------ behaviour

    def sorted_contacts(self, only_favourites: bool = False) -> list[Contact]:
        def key(c: Contact) -> tuple[str, str]:
            first, last = c.first.casefold(), c.last.casefold()
            return (last, first) if self.state.sort == "Last name" and last else (first, last)

        return sorted((c for c in self.state.contacts if c.favourite or not only_favourites), key=key)

    def toggle_favourite(self, contact: int) -> None:
        c = self.state.contact(contact)
        c.favourite = not c.favourite

    def call(self, contact: int) -> None:
        self.state.calls.append(self.state.contact(contact).phone)
        self.toast(f"Calling {self.state.contact(contact).name}")

    def message(self, contact: int) -> None:
        self.state.messages.append(self.state.contact(contact).phone)

    def send_email(self, contact: int) -> None:
        self.state.emails.append(self.state.contact(contact).email)

    def share(self, contact: int) -> None:
        self.close_all()
        self.state.shared.append(contact)

    def form_values(self, contact: int | None) -> dict[str, str]:
        c = self.state.contact(contact) if contact is not None else Contact(0, "")
        initial = {"first_name": c.first, "last_name": c.last, "phone": c.phone, "email": c.email}
        return {name: self.field(name, value) for name, value in initial.items()}

    def save(self, contact: int | None) -> None:
        values = {k: v.strip() for k, v in self.form_values(contact).items()}
        if not (values["first_name"] or values["last_name"]) or email_problem(values["email"]):
            return
        if contact is None:
            c = Contact(self.state.next_id, values["first_name"] or values["last_name"],
                        values["last_name"] if values["first_name"] else "", values["phone"], values["email"])
            self.state.next_id += 1
            self.state.contacts.append(c)
            self.switch("contact_details", contact=c.id)
        else:
            c = self.state.contact(contact)
            c.first, c.last, c.phone, c.email = (values["first_name"], values["last_name"], values["phone"],
                                                 values["email"])
            self.back()

    def leave_editor(self, contact: int | None) -> None:
        original = self.state.contact(contact) if contact is not None else Contact(0, "")
        before = {"first_name": original.first, "last_name": original.last, "phone": original.phone,
                  "email": original.email}
        if self.form_values(contact) != before:
            self.open("discard_changes")
        else:
            self.back()

    def discard(self) -> None:
        self.close()
        self.back()

    def delete(self, contact: int) -> None:
        name = self.state.contact(contact).name
        self.state.contacts = [c for c in self.state.contacts if c.id != contact]
        self.close_all()
        if self.current_screen == "contact_details":
            self.back()
        self.toast(f"{name} deleted")

    def choose_sort(self, sort: str) -> None:
        self.state.sort = sort
        self.close()

    # ------------------------------------------------------------------------------------ pieces

    def contact_row(self, c: Contact, with_phone: bool = False) -> ListItem:
        return ListItem(
            id="contact_item",
            on_tap=partial(self.open, "contact_details", contact=c.id),
            children=[
                Image(id="contact_avatar", size=105),
                Column(children=[
                    Text(c.name, id="contact_name", max_lines=1),
                    Text(c.phone, id="contact_number", style="caption") if with_phone and c.phone else None,
                ]),
            ],
        )

    def main_screen(self, current: str) -> Screen:
        contacts = self.sorted_contacts(only_favourites=current == "favourites")
        noun = "favourite" if current == "favourites" else "contact"
        return Screen(
            toolbar=Toolbar(
                title="Contacts",
                actions=[ImageButton(id="search", desc="Search", kind="action", on_tap=partial(self.open, "search"))],
                menu=[MenuItem("Sort by", on_tap=partial(self.open, "sort_contacts"))],
            ),
            body=[
                Tabs(id="main_tabs", tabs=[
                    Tab("Contacts", id="tab_contacts", selected=current == "contacts",
                        on_tap=partial(self.switch, "contacts")),
                    Tab("Favourites", id="tab_favourites", selected=current == "favourites",
                        on_tap=partial(self.switch, "favourites")),
                ]),
                Row(pad_x=42, pad_y=12, children=[
                    Text(f"{len(contacts)} {noun}{'' if len(contacts) == 1 else 's'}", id="contacts_count",
                         style="caption")]),
                ListView(id="contacts_list", items=[self.contact_row(c) for c in contacts],
                         empty=Text("No favourites yet" if current == "favourites" else "No contacts",
                                    id="contacts_empty")),
            ],
            fab=ImageButton(id="fab_add_contact", desc="Create new contact", on_tap=partial(self.open, "edit_contact")),
        )

    # ------------------------------------------------------------------------------------ screens

    @screen(".activities.MainActivity")
    def contacts(self) -> Screen:
        return self.main_screen("contacts")

    @screen(".activities.MainActivity")
    def favourites(self) -> Screen:
        return self.main_screen("favourites")

    @screen(".activities.SearchActivity")
    def search(self) -> Screen:
        query = self.field("query").strip().casefold()
        digits = "".join(ch for ch in query if ch.isdigit())
        hits = [c for c in self.sorted_contacts()
                if query and (query in c.name.casefold() or query in c.email.casefold()
                              or (digits and digits in "".join(ch for ch in c.phone if ch.isdigit())))]
        return Screen(
            toolbar=Toolbar(nav=self.back, title_widget=Input(name="query", id="search_input",
                                                               hint="Search contacts", autofocus=True)),
            body=[ListView(id="search_results", items=[self.contact_row(c, with_phone=True) for c in hits],
                           empty=Text("No contacts found" if query else "Search by name, number or email",
                                      id="search_empty"))],
        )

    @screen(".activities.ViewContactActivity")
    def contact_details(self, contact: int) -> Screen:
        c = self.state.contact(contact)
        return Screen(
            toolbar=Toolbar(
                nav=self.back,
                actions=[
                    ImageButton(id="favourite", kind="action", selected=c.favourite,
                                desc="Remove from favourites" if c.favourite else "Add to favourites",
                                on_tap=partial(self.toggle_favourite, c.id)),
                    ImageButton(id="edit", desc="Edit", kind="action",
                                on_tap=partial(self.open, "edit_contact", contact=c.id)),
                ],
                menu=[
                    MenuItem("Share", on_tap=partial(self.share, c.id)),
                    MenuItem("Delete", on_tap=partial(self.open, "delete_contact", contact=c.id)),
                ],
            ),
            body=[
                Row(pad_x=390, pad_y=42, children=[Image(id="contact_photo", size=300)]),
                Row(pad_x=42, pad_y=21, children=[Text(c.name, id="contact_name", style="headline")]),
                ListItem(id="contact_phone_holder", on_tap=partial(self.call, c.id), children=[
                    Column(children=[Text(c.phone, id="contact_phone"), Text("Mobile", id="contact_phone_type",
                                                                               style="caption")]),
                    ImageButton(id="send_sms", desc="Send SMS", on_tap=partial(self.message, c.id)),
                    ImageButton(id="call", desc="Call", on_tap=partial(self.call, c.id)),
                ]) if c.phone else None,
                ListItem(id="contact_email_holder", on_tap=partial(self.send_email, c.id), children=[
                    Column(children=[Text(c.email, id="contact_email"), Text("Home", id="contact_email_type",
                                                                               style="caption")]),
                    ImageButton(id="send_email", desc="Send email", on_tap=partial(self.send_email, c.id)),
                ]) if c.email else None,
            ],
        )

    @screen(".activities.EditContactActivity")
    def edit_contact(self, contact: int | None = None) -> Screen:
        c = self.state.contact(contact) if contact is not None else Contact(0, "")
        values = self.form_values(contact)
        problem = email_problem(values["email"])
        has_name = bool(values["first_name"].strip() or values["last_name"].strip())
        return Screen(
            toolbar=Toolbar(
                title="Create contact" if contact is None else "Edit contact",
                nav=partial(self.leave_editor, contact),
                actions=[ImageButton(id="save", desc="Save", kind="action", enabled=has_name and not problem,
                                     on_tap=partial(self.save, contact))],
            ),
            body=[Column(pad_x=42, pad_y=21, children=[
                Input(name="first_name", id="first_name_input", hint="First name", value=c.first, autofocus=True),
                Input(name="last_name", id="last_name_input", hint="Last name", value=c.last),
                Input(name="phone", id="phone_input", hint="Phone", value=c.phone),
                Input(name="email", id="email_input", hint="Email", value=c.email),
                Text(problem, id="email_error", style="caption") if problem else None,
            ])],
            on_back=partial(self.leave_editor, contact),
        )

    # ------------------------------------------------------------------------------------ dialogs

    @dialog
    def delete_contact(self, contact: int) -> Dialog:
        return self.confirm_dialog("Delete contact?",
                                   f"{self.state.contact(contact).name} will be removed from your contacts.",
                                   ("Delete", partial(self.delete, contact)))

    @dialog
    def discard_changes(self) -> Dialog:
        return self.confirm_dialog("Discard changes?", "The changes you made will be lost.",
                                   ("Discard", self.discard), cancel="Keep editing")

    @dialog
    def sort_contacts(self) -> Dialog:
        return self.choice_dialog("Sort by", "sort_radio_group", SORTS, self.state.sort, self.choose_sort)
