"""Music: a song library with search, playlists, a player and settings (``org.tapir.music``).

The element ids are the contract with ``samples/music/ELEMENTS.md`` and the app document written
from it: keep them stable.
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
    Menu,
    MenuItem,
    Row,
    Screen,
    Switch,
    Tab,
    Tabs,
    Text,
    Toolbar,
    ToolkitApp,
    alert,
    dialog,
    menu,
    screen,
)

# title | artist | album | m:ss  (an invented catalogue)
CATALOGUE = """
Midnight Drive | Nova Lights | Neon Coast | 3:42
Paper Planes Over Lisbon | Nova Lights | Neon Coast | 4:05
Glass Harbour | Nova Lights | Neon Coast | 3:18
Satellite Heart | Nova Lights | Afterglow | 3:56
Streetlight Waltz | Nova Lights | Afterglow | 4:31
Low Tide | Harbor Lane | Salt and Cedar | 5:12
Lanterns | Harbor Lane | Salt and Cedar | 3:27
The Long Way Home | Harbor Lane | Salt and Cedar | 4:48
Driftwood | Harbor Lane | Quiet Rooms | 3:03
Northern Window | Harbor Lane | Quiet Rooms | 4:16
Corazón de Papel | Marisol Reyes | Cielo Abierto | 3:34
Lluvia en Agosto | Marisol Reyes | Cielo Abierto | 4:09
Golden Hour | Marisol Reyes | Cielo Abierto | 3:51
Las Olas | Marisol Reyes | Mar Adentro | 4:22
Foxglove | The Quiet Foxes | Den | 2:58
Snowmelt | The Quiet Foxes | Den | 3:40
Hollow Oak | The Quiet Foxes | Den | 4:12
Campfire Static | The Quiet Foxes | Embers | 3:15
Wild Thyme | The Quiet Foxes | Embers | 3:29
Pulse Theory | Kestrel | Circuit Bloom | 5:55
Blue Hour Rave | Kestrel | Circuit Bloom | 6:12
Signal Lost | Kestrel | Circuit Bloom | 4:44
Overclocked | Kestrel | Voltage | 3:58
Prism | Kestrel | Voltage | 5:07
Harmattan | Amara Okafor | Red Earth | 4:02
Lagos Morning | Amara Okafor | Red Earth | 3:37
Mother Tongue | Amara Okafor | Red Earth | 4:26
Ije | Amara Okafor | Homeward | 3:49
Rain on Tin Roofs | Amara Okafor | Homeward | 4:14
Interstate 9 | Northbound | Mile Markers | 3:22
Gravel Roads | Northbound | Mile Markers | 3:09
Last Exit | Northbound | Mile Markers | 4:37
Headlights | Northbound | Overpass | 3:44
Canyon Echo | Northbound | Overpass | 5:01
Via Roma | Luca Bellini | Notturno | 3:30
Espresso Sonata | Luca Bellini | Notturno | 2:47
Amalfi Blue | Luca Bellini | Notturno | 4:19
Piazza at Dawn | Luca Bellini | Serenata | 3:55
Ultima Luna | Luca Bellini | Serenata | 4:40
Bohemian Skies | Nova Lights | Afterglow | 5:48
Morning Static | Kestrel | Voltage | 4:03
Seaglass | Harbor Lane | Quiet Rooms | 3:36
Cinder | The Quiet Foxes | Embers | 2:51
Sunday Market | Marisol Reyes | Mar Adentro | 3:12
"""

THEMES = ("White", "Dark", "Auto light / dark")
SORTS = ("Title", "Artist", "Duration")


@dataclass
class Song:
    id: int
    title: str
    artist: str
    album: str
    duration: int


@dataclass
class Playlist:
    id: int
    name: str
    songs: list[int] = field(default_factory=list)


@dataclass
class MusicState:
    songs: list[Song]
    playlists: list[Playlist]
    next_playlist_id: int = 3
    now_playing: int | None = None
    playing: bool = False
    position: int = 0
    shuffle: bool = False
    theme: str = "White"
    show_album_art: bool = True
    gapless: bool = False
    sort: str = "Title"
    queue: list[int] = field(default_factory=list)
    shared: list[int] = field(default_factory=list)

    def song(self, song_id: int) -> Song:
        return next(s for s in self.songs if s.id == song_id)

    def playlist(self, playlist_id: int) -> Playlist:
        return next(p for p in self.playlists if p.id == playlist_id)


def parse_catalogue(text: str = CATALOGUE) -> list[Song]:
    songs = []
    for i, line in enumerate(line for line in text.strip().splitlines() if line.strip()):
        title, artist, album, length = (part.strip() for part in line.split("|"))
        minutes, seconds = length.split(":")
        songs.append(Song(i + 1, title, artist, album, int(minutes) * 60 + int(seconds)))
    return songs


def mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class MusicApp(ToolkitApp):
    package = "org.tapir.music"
    label = "Music"
    launch_screen = "songs"
    drift_texts = {
        "Now playing": ("Playing now",),
        "New playlist": ("Create playlist", "New list"),
        "Show album art": ("Show album covers",),
        "Remove from playlist": ("Remove from this playlist",),
        "Play next": ("Play after current song",),
    }

    def initial_state(self) -> MusicState:
        songs = parse_catalogue()
        return MusicState(
            songs=songs,
            playlists=[Playlist(1, "Favourites", [1, 20, 25]), Playlist(2, "Road trip", [30, 31, 33, 34])],
        )

    # ------------------------------------------------------------------------------------ behaviour

    def sorted_songs(self) -> list[Song]:
        key = {
            "Title": lambda s: s.title.casefold(),
            "Artist": lambda s: (s.artist.casefold(), s.title.casefold()),
            "Duration": lambda s: (s.duration, s.title.casefold()),
        }[self.state.sort]
        return sorted(self.state.songs, key=key)

    def play(self, song: int) -> None:
        self.close_all()
        self.state.now_playing, self.state.playing, self.state.position = song, True, 0

    def toggle_play(self) -> None:
        if self.state.now_playing is not None:
            self.state.playing = not self.state.playing

    def skip(self, step: int) -> None:
        order = [s.id for s in self.sorted_songs()]
        if self.state.now_playing in order:
            at = order.index(self.state.now_playing)
            self.play(order[(at + step) % len(order)])

    def on_time(self, seconds: int) -> None:
        if self.state.playing and self.state.now_playing is not None:
            self.state.position += seconds
            if self.state.position >= self.state.song(self.state.now_playing).duration:
                self.skip(1)

    def play_next(self, song: int) -> None:
        self.close_all()
        self.state.queue.append(song)
        self.toast("Will play next")

    def share(self, song: int) -> None:
        self.close_all()
        self.state.shared.append(song)
        self.toast("Link copied")

    def add_song_to(self, song: int, playlist: int) -> None:
        self.close_all()
        target = self.state.playlist(playlist)
        if song in target.songs:
            self.toast(f"Already in {target.name}")
        else:
            target.songs.append(song)
            self.toast(f"Added to {target.name}")

    def create_playlist(self, song: int | None) -> None:
        name = self.field("playlist_name").strip()
        new = Playlist(self.state.next_playlist_id, name, [song] if song is not None else [])
        self.state.next_playlist_id += 1
        self.state.playlists.append(new)
        self.close_all()
        self.toast(f"Added to {name}" if song is not None else f"Created {name}")

    def apply_rename(self, playlist: int) -> None:
        self.state.playlist(playlist).name = self.field("playlist_name").strip()
        self.close_all()

    def remove_playlist(self, playlist: int) -> None:
        self.state.playlists = [p for p in self.state.playlists if p.id != playlist]
        self.back()

    def remove_from_playlist(self, song: int, playlist: int) -> None:
        self.state.playlist(playlist).songs.remove(song)
        self.close_all()

    def remove_song(self, song: int) -> None:
        self.state.songs = [s for s in self.state.songs if s.id != song]
        for p in self.state.playlists:
            p.songs = [s for s in p.songs if s != song]
        if self.state.now_playing == song:
            self.state.now_playing, self.state.playing = None, False
        self.close_all()

    def choose(self, setting: str, value: object) -> None:
        setattr(self.state, setting, value)
        self.close_all()

    def toggle(self, setting: str) -> None:
        setattr(self.state, setting, not getattr(self.state, setting))

    def name_problem(self, name: str, current: str | None = None) -> str:
        taken = {p.name.casefold() for p in self.state.playlists} - {(current or "").casefold()}
        return "A playlist with this name already exists" if name.strip().casefold() in taken else ""

    # ------------------------------------------------------------------------------------ pieces

    def song_row(self, song: Song, **params: int) -> ListItem:
        opener = partial(self.open, "playlist_song_options" if params else "song_options", song=song.id, **params)
        return ListItem(
            id="song_item",
            min_height=189,
            selected=song.id == self.state.now_playing,
            on_tap=partial(self.play, song.id),
            on_long_tap=opener,
            children=[
                Image(id="song_art", size=126) if self.state.show_album_art else None,
                Column(children=[
                    Text(song.title, id="song_title", max_lines=1),
                    Text(song.artist, id="song_artist", style="caption", max_lines=1),
                ]),
                Text(mmss(song.duration), id="song_duration", style="caption", wrap=True),
                ImageButton(id="song_more", desc="More options", on_tap=opener),
            ],
        )

    def now_playing_bar(self) -> ListItem | None:
        if self.state.now_playing is None:
            return None
        song = self.state.song(self.state.now_playing)
        return ListItem(
            id="now_playing_bar",
            on_tap=partial(self.open, "now_playing"),
            children=[
                Column(children=[
                    Text(song.title, id="now_playing_title", max_lines=1),
                    Text(song.artist, id="now_playing_artist", style="caption", max_lines=1),
                ]),
                ImageButton(id="now_playing_play_pause", desc="Pause" if self.state.playing else "Play",
                            on_tap=self.toggle_play),
            ],
        )

    def main_toolbar(self) -> Toolbar:
        return Toolbar(
            title="Music",
            actions=[ImageButton(id="search", desc="Search", kind="action", on_tap=partial(self.open, "search"))],
            menu=[
                MenuItem("Sort by", on_tap=partial(self.open, "sort_songs")),
                MenuItem("Settings", on_tap=partial(self.open, "settings")),
            ],
        )

    def main_tabs(self, current: str) -> Tabs:
        return Tabs(id="main_tabs", tabs=[
            Tab("Songs", id="tab_songs", selected=current == "songs", on_tap=partial(self.switch, "songs")),
            Tab("Playlists", id="tab_playlists", selected=current == "playlists",
                on_tap=partial(self.switch, "playlists")),
        ])

    # ------------------------------------------------------------------------------------ screens

    @screen(".activities.MainActivity")
    def songs(self) -> Screen:
        songs = self.sorted_songs()
        return Screen(
            toolbar=self.main_toolbar(),
            body=[
                self.main_tabs("songs"),
                Row(pad_x=42, pad_y=12, children=[Text(count(len(songs), "song"), id="songs_count", style="caption")]),
                ListView(id="songs_list", items=[self.song_row(s) for s in songs],
                         empty=Text("No songs", id="songs_empty")),
            ],
            bottom=[self.now_playing_bar()],
        )

    @screen(".activities.MainActivity")
    def playlists(self) -> Screen:
        return Screen(
            toolbar=self.main_toolbar(),
            body=[
                self.main_tabs("playlists"),
                ListView(
                    id="playlists_list",
                    empty=Text("No playlists yet", id="playlists_empty"),
                    items=[
                        ListItem(id="playlist_item", on_tap=partial(self.open, "playlist", playlist=p.id), children=[
                            Image(id="playlist_icon", size=126),
                            Column(children=[
                                Text(p.name, id="playlist_name", max_lines=1),
                                Text(count(len(p.songs), "song"), id="playlist_song_count", style="caption"),
                            ]),
                        ])
                        for p in self.state.playlists
                    ],
                ),
            ],
            bottom=[self.now_playing_bar()],
            fab=ImageButton(id="fab_new_playlist", desc="New playlist", on_tap=partial(self.open, "new_playlist")),
        )

    @screen(".activities.PlaylistActivity")
    def playlist(self, playlist: int) -> Screen:
        p = self.state.playlist(playlist)
        songs = [self.state.song(s) for s in p.songs]
        total = sum(s.duration for s in songs)
        return Screen(
            toolbar=Toolbar(
                title=p.name,
                nav=self.back,
                actions=[ImageButton(id="play_all", desc="Play all", kind="action",
                                     enabled=bool(songs), on_tap=partial(self.play, p.songs[0]) if songs else None)],
                menu=[
                    MenuItem("Rename", on_tap=partial(self.open, "rename_playlist", playlist=p.id)),
                    MenuItem("Delete playlist", on_tap=partial(self.open, "delete_playlist", playlist=p.id)),
                ],
            ),
            body=[
                Row(pad_x=42, pad_y=12, children=[
                    Text(f"{count(len(songs), 'song')} · {mmss(total)}", id="playlist_summary", style="caption")]),
                ListView(id="playlist_songs", items=[self.song_row(s, playlist=p.id) for s in songs],
                         empty=Text("This playlist is empty", id="playlist_empty")),
            ],
            bottom=[self.now_playing_bar()],
        )

    @screen(".activities.SearchActivity")
    def search(self) -> Screen:
        query = self.field("query").strip().casefold()
        hits = [s for s in self.sorted_songs()
                if query and query in f"{s.title}\n{s.artist}\n{s.album}".casefold()]
        return Screen(
            toolbar=Toolbar(nav=self.back, title_widget=Input(
                name="query", id="search_input", hint="Search songs", autofocus=True)),
            body=[
                Row(pad_x=42, pad_y=12, children=[Text(count(len(hits), "result"), id="results_count",
                                                       style="caption")]) if query else None,
                ListView(id="search_results", items=[self.song_row(s) for s in hits],
                         empty=Text("No results" if query else "Search by title, artist or album",
                                    id="search_empty")),
            ],
        )

    @screen(".activities.PlayerActivity")
    def now_playing(self) -> Screen:
        song = self.state.song(self.state.now_playing) if self.state.now_playing is not None else None
        toolbar = Toolbar(title="Now playing", nav=self.back)
        if song is None:
            return Screen(toolbar=toolbar, body=[Text("Nothing is playing", id="player_empty")])
        return Screen(
            toolbar=toolbar,
            body=[
                Row(pad_x=190, pad_y=42, children=[Image(id="player_art", size=700)]),
                Column(pad_x=63, children=[
                    Text(song.title, id="player_title", style="headline", max_lines=1),
                    Text(song.artist, id="player_artist"),
                    Text(song.album, id="player_album", style="caption"),
                ]),
                Row(pad_x=63, pad_y=21, children=[
                    Text(mmss(self.state.position), id="player_position", style="caption"),
                    Text(mmss(song.duration), id="player_duration", style="caption", wrap=True),
                ]),
                Row(pad_x=63, pad_y=21, gap=63, children=[
                    ImageButton(id="player_shuffle", desc="Shuffle", selected=self.state.shuffle,
                                on_tap=partial(self.toggle, "shuffle")),
                    ImageButton(id="player_previous", desc="Previous", on_tap=partial(self.skip, -1)),
                    ImageButton(id="player_play_pause", desc="Pause" if self.state.playing else "Play",
                                on_tap=self.toggle_play),
                    ImageButton(id="player_next", desc="Next", on_tap=partial(self.skip, 1)),
                ]),
            ],
        )

    @screen(".activities.SettingsActivity")
    def settings(self) -> Screen:
        def header(text: str, ident: str) -> Row:
            return Row(pad_x=42, pad_y=21, children=[Text(text, id=ident, style="caption")])

        def switch_row(ident: str, text: str, setting: str) -> ListItem:
            return ListItem(id=f"{ident}_holder", on_tap=partial(self.toggle, setting), children=[
                Switch(text, id=ident, checked=getattr(self.state, setting))])

        return Screen(
            toolbar=Toolbar(title="Settings", nav=self.back),
            body=[
                header("Appearance", "settings_appearance_label"),
                ListItem(id="settings_theme_holder", on_tap=partial(self.open, "theme"), children=[
                    Column(children=[
                        Text("Theme", id="settings_theme_label"),
                        Text(self.state.theme, id="settings_theme", style="caption"),
                    ])]),
                switch_row("settings_show_album_art", "Show album art", "show_album_art"),
                header("Playback", "settings_playback_label"),
                switch_row("settings_gapless", "Gapless playback", "gapless"),
                ListItem(id="settings_sort_holder", on_tap=partial(self.open, "sort_songs"), children=[
                    Column(children=[
                        Text("Sort songs by", id="settings_sort_label"),
                        Text(self.state.sort, id="settings_sort", style="caption"),
                    ])]),
            ],
        )

    # ------------------------------------------------------------------------------------ menus

    @menu
    def song_options(self, song: int) -> Menu:
        return Menu(items=[
            MenuItem("Play", on_tap=partial(self.play, song)),
            MenuItem("Play next", on_tap=partial(self.play_next, song)),
            MenuItem("Add to playlist", on_tap=partial(self.open, "add_to_playlist", song=song)),
            MenuItem("Share", on_tap=partial(self.share, song)),
            MenuItem("Properties", on_tap=partial(self.open, "song_properties", song=song)),
            MenuItem("Delete", on_tap=partial(self.open, "delete_song", song=song)),
        ])

    @menu
    def playlist_song_options(self, song: int, playlist: int) -> Menu:
        return Menu(items=[
            MenuItem("Play", on_tap=partial(self.play, song)),
            MenuItem("Remove from playlist", on_tap=partial(self.remove_from_playlist, song, playlist)),
        ])

    # ------------------------------------------------------------------------------------ dialogs

    @dialog
    def add_to_playlist(self, song: int) -> Dialog:
        return alert(
            "Add to playlist",
            body=[ListView(
                id="playlist_choices",
                empty=Text("No playlists yet", id="playlist_choices_empty"),
                items=[
                    ListItem(id="playlist_choice", on_tap=partial(self.add_song_to, song, p.id), children=[
                        Text(p.name, id="playlist_choice_name", max_lines=1),
                        Text(count(len(p.songs), "song"), id="playlist_choice_count", style="caption", wrap=True),
                    ])
                    for p in self.state.playlists
                ],
            )],
            neutral=("New playlist", partial(self.open, "new_playlist", song=song)),
            cancel=("Cancel", self.close),
        )

    @dialog
    def new_playlist(self, song: int | None = None) -> Dialog:
        name = self.field("playlist_name")
        problem = self.name_problem(name)
        return self.form_dialog(
            "New playlist",
            [
                Input(name="playlist_name", id="playlist_name_input", hint="Playlist name", autofocus=True),
                Text(problem, id="playlist_name_error", style="caption") if problem else None,
            ],
            ("Create", partial(self.create_playlist, song)),
            ok_enabled=bool(name.strip()) and not problem,
        )

    @dialog
    def rename_playlist(self, playlist: int) -> Dialog:
        current = self.state.playlist(playlist).name
        name = self.field("playlist_name", current)
        problem = self.name_problem(name, current)
        return self.form_dialog(
            "Rename playlist",
            [
                Input(name="playlist_name", id="playlist_name_input", hint="Playlist name", value=current,
                      autofocus=True, select_on_focus=True),
                Text(problem, id="playlist_name_error", style="caption") if problem else None,
            ],
            ("Rename", partial(self.apply_rename, playlist)),
            ok_enabled=bool(name.strip()) and not problem,
        )

    @dialog
    def delete_playlist(self, playlist: int) -> Dialog:
        return self.confirm_dialog(
            "Delete playlist?",
            f"“{self.state.playlist(playlist).name}” will be deleted. The songs stay in your library.",
            ("Delete", partial(self.remove_playlist, playlist)),
        )

    @dialog
    def delete_song(self, song: int) -> Dialog:
        return self.confirm_dialog(
            "Delete song?", f"“{self.state.song(song).title}” will be removed from your library and playlists.",
            ("Delete", partial(self.remove_song, song)),
        )

    @dialog
    def song_properties(self, song: int) -> Dialog:
        s = self.state.song(song)

        def prop(label: str, value: str, ident: str) -> Column:
            return Column(pad_y=10, children=[Text(label, style="caption"), Text(value, id=ident)])

        return self.notice_dialog("Properties", body=[
            prop("Title", s.title, "property_title"),
            prop("Artist", s.artist, "property_artist"),
            prop("Album", s.album, "property_album"),
            prop("Duration", mmss(s.duration), "property_duration"),
        ])

    @dialog
    def theme(self) -> Dialog:
        return self.choice_dialog("Theme", "dialog_radio_group", THEMES, self.state.theme,
                                  partial(self.choose, "theme"))

    @dialog
    def sort_songs(self) -> Dialog:
        return self.choice_dialog("Sort by", "sort_radio_group", SORTS, self.state.sort, partial(self.choose, "sort"),
                                  choice_id=lambda s: f"sort_{s.lower()}")
