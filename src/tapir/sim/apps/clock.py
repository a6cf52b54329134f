"""Clock: world time, alarms, a stopwatch and a timer (``org.tapir.clock``).

Time is the app's simulated ``now`` (seconds since midnight, 10:08:00 on Thursday 14 May 2026 after
a reset; every input event lets one second pass), so the running timer and stopwatch are
deterministic. The element ids are the contract with ``samples/clock/ELEMENTS.md``: keep them stable.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import partial

from tapir.sim.toolkit import (
    Button,
    Column,
    Dialog,
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
    Widget,
    dialog,
    menu,
    screen,
)

START_DATE = dt.date(2026, 5, 14)
SNOOZE_CHOICES = (5, 10, 15, 20)
TABS = (("clock", "Clock"), ("alarm", "Alarm"), ("stopwatch", "Stopwatch"), ("timer", "Timer"))


@dataclass
class Alarm:
    id: int
    hour: int
    minute: int
    label: str = ""
    days: str = "Once"
    enabled: bool = True


@dataclass
class ClockState:
    alarms: list[Alarm]
    next_alarm_id: int = 3
    use_24h: bool = True
    vibrate: bool = True
    snooze_minutes: int = 10
    timer_duration: int = 300
    timer_remaining: int = 300
    timer_state: str = "idle"  # idle | running | paused | finished
    stopwatch_elapsed: int = 0
    stopwatch_running: bool = False
    laps: list[int] = field(default_factory=list)

    def alarm(self, alarm_id: int) -> Alarm:
        return next(a for a in self.alarms if a.id == alarm_id)


def two_digits(text: str, limit: int) -> int | None:
    """The number in a picker field, or ``None`` when it is not a number in ``0..limit``."""
    text = text.strip()
    if not text.isdigit() or len(text) > 2 or int(text) > limit:
        return None
    return int(text)


def clock_text(seconds: int) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class ClockApp(ToolkitApp):
    package = "org.tapir.clock"
    label = "Clock"
    launch_screen = "clock"
    drift_texts = {
        "Add alarm": ("New alarm", "Create alarm"),
        "Stopwatch": ("Chronometer",),
        "Use 24-hour format": ("24-hour clock",),
        "Start": ("Go",),
        "Reset": ("Clear",),
    }

    def initial_state(self) -> ClockState:
        return ClockState(alarms=[
            Alarm(1, 6, 45, "Gym", "Mon, Wed, Fri", enabled=False),
            Alarm(2, 8, 0, "Work", "Mon, Tue, Wed, Thu, Fri"),
        ])

    # ------------------------------------------------------------------------------------ behaviour

    def time_text(self, hour: int, minute: int) -> str:
        if self.state.use_24h:
            return f"{hour:02d}:{minute:02d}"
        return f"{(hour - 1) % 12 + 1}:{minute:02d} {'AM' if hour < 12 else 'PM'}"

    def on_time(self, seconds: int) -> None:
        s = self.state
        if s.timer_state == "running":
            s.timer_remaining = max(0, s.timer_remaining - seconds)
            if s.timer_remaining == 0:
                s.timer_state = "finished"
        if s.stopwatch_running:
            s.stopwatch_elapsed += seconds

    def sorted_alarms(self) -> list[Alarm]:
        return sorted(self.state.alarms, key=lambda a: (a.hour, a.minute, a.id))

    def toggle_alarm(self, alarm: int) -> None:
        target = self.state.alarm(alarm)
        target.enabled = not target.enabled
        if target.enabled:
            self.toast(self.until_text(target))

    def until_text(self, alarm: Alarm) -> str:
        now = self.now // 60 % 1440
        delta = (alarm.hour * 60 + alarm.minute - now) % 1440 or 1440
        return f"Alarm set for {delta // 60} hours and {delta % 60} minutes from now"

    def picked_time(self) -> tuple[int, int] | None:
        hour, minute = two_digits(self.field("hour"), 23), two_digits(self.field("minute"), 59)
        return None if hour is None or minute is None else (hour, minute)

    def nudge(self, name: str, step: int, modulo: int) -> None:
        value = two_digits(self.field(name), modulo - 1) or 0
        self.set_field(name, f"{(value + step) % modulo:02d}")

    def confirm_time(self, alarm: int | None) -> None:
        picked = self.picked_time()
        if picked is None:
            return
        if alarm is None:
            target = Alarm(self.state.next_alarm_id, *picked)
            self.state.next_alarm_id += 1
            self.state.alarms.append(target)
        else:
            target = self.state.alarm(alarm)
            target.hour, target.minute, target.enabled = *picked, True
        self.close_all()
        self.toast(self.until_text(target))

    def set_label(self, alarm: int) -> None:
        self.state.alarm(alarm).label = self.field("label").strip()
        self.close_all()

    def delete_alarm(self, alarm: int) -> None:
        self.state.alarms = [a for a in self.state.alarms if a.id != alarm]
        self.close_all()
        self.toast("Alarm deleted")

    def timer_fields(self) -> int | None:
        minutes, seconds = two_digits(self.field("minutes", "05"), 99), two_digits(self.field("seconds", "00"), 59)
        if minutes is None or seconds is None or minutes * 60 + seconds == 0:
            return None
        return minutes * 60 + seconds

    def start_timer(self) -> None:
        total = self.timer_fields()
        if total is not None:
            self.state.timer_duration = self.state.timer_remaining = total
            self.state.timer_state = "running"

    def pause_timer(self) -> None:
        s = self.state
        s.timer_state = "paused" if s.timer_state == "running" else "running"

    def reset_timer(self) -> None:
        self.state.timer_state, self.state.timer_remaining = "idle", self.state.timer_duration
        minutes, seconds = divmod(self.state.timer_duration, 60)
        self.set_field("minutes", f"{minutes:02d}")
        self.set_field("seconds", f"{seconds:02d}")

    def stopwatch_toggle(self) -> None:
        self.state.stopwatch_running = not self.state.stopwatch_running

    def stopwatch_reset(self) -> None:
        self.state.stopwatch_running, self.state.stopwatch_elapsed, self.state.laps = False, 0, []

    def stopwatch_lap(self) -> None:
        self.state.laps.append(self.state.stopwatch_elapsed)

    def toggle(self, setting: str) -> None:
        setattr(self.state, setting, not getattr(self.state, setting))

    def choose_snooze(self, minutes: int) -> None:
        self.state.snooze_minutes = minutes
        self.close()

    # ------------------------------------------------------------------------------------ pieces

    def tab_screen(self, current: str, body: list, fab: ImageButton | None = None) -> Screen:
        return Screen(
            toolbar=Toolbar(title="Clock", menu=[MenuItem("Settings", on_tap=partial(self.open, "settings"))]),
            body=body,
            bottom=[Tabs(id="main_tabs", tabs=[
                Tab(text, id=f"tab_{name}", selected=name == current, on_tap=partial(self.switch, name))
                for name, text in TABS])],
            fab=fab,
        )

    # ------------------------------------------------------------------------------------ screens

    @screen(".activities.MainActivity")
    def clock(self) -> Screen:
        minutes = self.now // 60
        date = START_DATE + dt.timedelta(days=minutes // 1440)
        return self.tab_screen("clock", [
            Column(pad_x=42, pad_y=84, children=[
                Text(self.time_text(minutes // 60 % 24, minutes % 60), id="clock_time", style="display"),
                Text(f"{date:%a}, {date.day} {date:%b}", id="clock_date"),
            ]),
        ])

    @screen(".activities.MainActivity")
    def alarm(self) -> Screen:
        rows = [
            ListItem(
                id="alarm_item",
                min_height=210,
                on_tap=partial(self.open, "time_picker", alarm=a.id),
                on_long_tap=partial(self.open, "alarm_options", alarm=a.id),
                children=[
                    Column(children=[
                        Text(self.time_text(a.hour, a.minute), id="alarm_time", style="headline"),
                        Text(" · ".join(p for p in (a.label, a.days) if p), id="alarm_days", style="caption"),
                    ]),
                    Switch(id="alarm_switch", checked=a.enabled, on_tap=partial(self.toggle_alarm, a.id)),
                    ImageButton(id="alarm_more", desc="More options", on_tap=partial(self.open, "alarm_options",
                                                                                     alarm=a.id)),
                ],
            )
            for a in self.sorted_alarms()
        ]
        return self.tab_screen(
            "alarm",
            [ListView(id="alarms_list", items=rows, empty=Text("No alarms", id="alarms_empty"))],
            fab=ImageButton(id="fab_add_alarm", desc="Add alarm", on_tap=partial(self.open, "time_picker")),
        )

    @screen(".activities.MainActivity")
    def stopwatch(self) -> Screen:
        s = self.state
        laps = [
            ListItem(id="lap_item", min_height=126, children=[
                Text(f"Lap {n}", id="lap_number"),
                Text(clock_text(t - (s.laps[n - 2] if n > 1 else 0)), id="lap_time", wrap=True),
            ])
            for n, t in reversed(list(enumerate(s.laps, start=1)))
        ]
        return self.tab_screen("stopwatch", [
            Column(pad_x=42, pad_y=63, children=[Text(clock_text(s.stopwatch_elapsed), id="stopwatch_time",
                                                      style="display")]),
            Row(pad_x=42, pad_y=21, children=[
                Button("Pause" if s.stopwatch_running else "Start", id="stopwatch_start",
                       on_tap=self.stopwatch_toggle),
                Button("Lap", id="stopwatch_lap", enabled=s.stopwatch_running, on_tap=self.stopwatch_lap),
                Button("Reset", id="stopwatch_reset", enabled=s.stopwatch_elapsed > 0 and not s.stopwatch_running,
                       on_tap=self.stopwatch_reset),
            ]),
            ListView(id="laps_list", items=laps),
        ])

    @screen(".activities.MainActivity")
    def timer(self) -> Screen:
        s = self.state
        if s.timer_state == "idle":
            minutes, seconds = divmod(s.timer_duration, 60)
            body: list[Widget] = [
                Row(pad_x=63, pad_y=63, children=[
                    Column(children=[Text("Minutes", style="caption"),
                                     Input(name="minutes", id="timer_minutes", value=f"{minutes:02d}",
                                           select_on_focus=True)]),
                    Column(children=[Text("Seconds", style="caption"),
                                     Input(name="seconds", id="timer_seconds", value=f"{seconds:02d}",
                                           select_on_focus=True)]),
                ]),
                Row(pad_x=42, children=[Button("Start", id="timer_start", enabled=self.timer_fields() is not None,
                                               on_tap=self.start_timer)]),
            ]
        elif s.timer_state == "finished":
            body = [
                Column(pad_x=42, pad_y=63, children=[Text("Time's up", id="timer_finished", style="headline")]),
                Row(pad_x=42, children=[Button("Stop", id="timer_stop", on_tap=self.reset_timer)]),
            ]
        else:
            body = [
                Column(pad_x=42, pad_y=63, children=[Text(clock_text(s.timer_remaining), id="timer_time",
                                                          style="display")]),
                Row(pad_x=42, children=[
                    Button("Pause" if s.timer_state == "running" else "Resume", id="timer_pause",
                           on_tap=self.pause_timer),
                    Button("Reset", id="timer_reset", on_tap=self.reset_timer),
                ]),
            ]
        return self.tab_screen("timer", body)

    @screen(".activities.SettingsActivity")
    def settings(self) -> Screen:
        def switch_row(ident: str, text: str, setting: str) -> ListItem:
            return ListItem(id=f"{ident}_holder", on_tap=partial(self.toggle, setting), children=[
                Switch(text, id=ident, checked=getattr(self.state, setting))])

        return Screen(
            toolbar=Toolbar(title="Settings", nav=self.back),
            body=[
                switch_row("settings_use_24h", "Use 24-hour format", "use_24h"),
                switch_row("settings_vibrate", "Vibrate for alarms", "vibrate"),
                ListItem(id="settings_snooze_holder", on_tap=partial(self.open, "snooze_length"), children=[
                    Column(children=[
                        Text("Snooze length", id="settings_snooze_label"),
                        Text(f"{self.state.snooze_minutes} minutes", id="settings_snooze", style="caption"),
                    ])]),
            ],
        )

    # ------------------------------------------------------------------------------------ menus and dialogs

    @menu
    def alarm_options(self, alarm: int) -> Menu:
        return Menu(items=[
            MenuItem("Change time", on_tap=partial(self.open, "time_picker", alarm=alarm)),
            MenuItem("Edit label", on_tap=partial(self.open, "alarm_label", alarm=alarm)),
            MenuItem("Delete", on_tap=partial(self.delete_alarm, alarm)),
        ])

    @dialog
    def time_picker(self, alarm: int | None = None) -> Dialog:
        if alarm is None:
            now = self.now // 60
            hour, minute = now // 60 % 24, now % 60
        else:
            target = self.state.alarm(alarm)
            hour, minute = target.hour, target.minute

        def spinner(name: str, initial: int, modulo: int, what: str) -> Column:
            return Column(align="center", children=[
                ImageButton(id=f"{name}_up", desc=f"Increase {what}", on_tap=partial(self.nudge, name, 1, modulo)),
                Input(name=name, id=f"picker_{name}", value=f"{initial:02d}", select_on_focus=True),
                ImageButton(id=f"{name}_down", desc=f"Decrease {what}", on_tap=partial(self.nudge, name, -1, modulo)),
            ])

        valid = (two_digits(self.field("hour", f"{hour:02d}"), 23) is not None
                 and two_digits(self.field("minute", f"{minute:02d}"), 59) is not None)
        return self.form_dialog(
            "Set alarm time" if alarm is None else "Change alarm time",
            [
                Row(children=[spinner("hour", hour, 24, "hour"), Text(":", style="headline", wrap=True),
                              spinner("minute", minute, 60, "minute")]),
                None if valid else Text("Enter a valid time (00:00 to 23:59)", id="picker_error", style="caption"),
            ],
            ("OK", partial(self.confirm_time, alarm)),
            ok_enabled=valid,
        )

    @dialog
    def alarm_label(self, alarm: int) -> Dialog:
        return self.form_dialog(
            "Label",
            [Input(name="label", id="alarm_label_input", hint="Label", value=self.state.alarm(alarm).label,
                   autofocus=True)],
            ("OK", partial(self.set_label, alarm)),
        )

    @dialog
    def snooze_length(self) -> Dialog:
        return self.choice_dialog("Snooze length", "dialog_radio_group", SNOOZE_CHOICES, self.state.snooze_minutes,
                                  self.choose_snooze, label=lambda m: f"{m} minutes")
