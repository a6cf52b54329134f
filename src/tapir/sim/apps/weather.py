"""Weather: a forecast whose settings all open one single-choice dialog (``org.tapir.weather``).

Four settings (units, wind speed, refresh, theme) are chosen in dialogs built by the same code:
the same layout and resource ids (``choice_list`` and its radio rows), different titles and
options, as apps reuse one list-preference dialog class for all their settings. Two confirm
dialogs (clear the search history, remove a location) are alike too. They are the look-alike
screens ``samples/weather`` grounds on. Refreshing takes time: "Updating…" shows for
``REFRESH_S`` simulated seconds, then when the forecast was updated (what waits are tried on).
The element ids are the contract with ``samples/weather/ELEMENTS.md``: keep them stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from tapir.sim.toolkit import (
    Column,
    Dialog,
    ImageButton,
    ListItem,
    ListView,
    Menu,
    MenuItem,
    Screen,
    Text,
    Toolbar,
    ToolkitApp,
    dialog,
    menu,
    screen,
)

UNITS = ("Celsius", "Fahrenheit")
WIND = ("km/h", "mph", "m/s", "Beaufort")
REFRESH = ("Every 15 minutes", "Every 30 minutes", "Every hour", "Manually")
THEMES = ("Light", "Dark", "System default")
DAYS = ("Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed")
SKIES = ("Sunny", "Partly cloudy", "Cloudy", "Light rain", "Showers", "Thunderstorms", "Windy")
#: Simulated seconds a refresh takes.
REFRESH_S = 4


@dataclass
class City:
    id: int
    name: str
    #: Today's temperature (°C) and wind (km/h); the forecast is derived from them.
    temp_c: int
    wind_kmh: int
    sky: int


@dataclass
class WeatherState:
    cities: list[City]
    current: int = 1
    units: str = "Celsius"
    wind: str = "km/h"
    refresh: str = "Every 30 minutes"
    theme: str = "System default"
    history: list[str] = field(default_factory=lambda: ["Porto", "Bergen", "Kyoto"])
    next_id: int = 5
    #: While refreshing: the simulated time the refresh ends; and when the last one ended.
    updating_until: int | None = None
    updated_at: int | None = None

    def city(self, city_id: int) -> City:
        return next(c for c in self.cities if c.id == city_id)


def beaufort(kmh: int) -> int:
    limits = (1, 6, 12, 20, 29, 39, 50, 62, 75, 89, 103, 118)
    return next((force for force, top in enumerate(limits) if kmh < top), 12)


class WeatherApp(ToolkitApp):
    package = "org.tapir.weather"
    label = "Weather"
    launch_screen = "forecast"
    drift_texts = {
        "Wind speed": ("Wind unit",),
        "Refresh": ("Update interval",),
        "Locations": ("Places",),
    }

    def initial_state(self) -> WeatherState:
        return WeatherState(cities=[
            City(1, "Lisbon", 21, 14, 1), City(2, "Oslo", 9, 22, 4), City(3, "Nairobi", 24, 11, 0),
            City(4, "Montréal", 15, 30, 2),
        ])

    # ------------------------------------------------------------------------------------ behaviour

    def temperature(self, celsius: int) -> str:
        if self.state.units == "Fahrenheit":
            return f"{round(celsius * 9 / 5 + 32)}°F"
        return f"{celsius}°C"

    def wind_speed(self, kmh: int) -> str:
        unit = self.state.wind
        if unit == "mph":
            return f"{round(kmh / 1.609)} mph"
        if unit == "m/s":
            return f"{round(kmh / 3.6)} m/s"
        if unit == "Beaufort":
            return f"Force {beaufort(kmh)}"
        return f"{kmh} km/h"

    def forecast_days(self, city: City) -> list[tuple[str, str, int, int]]:
        """(day, sky, high, low) for two weeks, varying around today's weather."""
        out = []
        for i in range(14):
            swing = (i * 7 + city.id * 3) % 9 - 4
            sky = SKIES[(city.sky + i * 3) % len(SKIES)]
            day = "Today" if i == 0 else DAYS[i % 7] + (f" {15 + i}" if i >= 7 else "")
            out.append((day, sky, city.temp_c + swing, city.temp_c + swing - 6 - i % 3))
        return out

    def choose(self, setting: str, value: object) -> None:
        setattr(self.state, setting, value)
        self.close_all()

    def show_city(self, city: int) -> None:
        self.state.current = city
        self.back()

    def remove_city(self, city: int) -> None:
        self.state.cities = [c for c in self.state.cities if c.id != city]
        if self.state.current == city and self.state.cities:
            self.state.current = self.state.cities[0].id
        self.close_all()
        self.toast("Location removed")

    def clear_history(self) -> None:
        self.state.history = []
        self.close_all()
        self.toast("Search history cleared")

    def refresh_now(self) -> None:
        self.close_all()
        # the tap itself moves the clock on by one step: the refresh takes REFRESH_S from after it
        self.state.updating_until = self.now + self.time_step_s + REFRESH_S

    def on_time(self, seconds: int) -> None:
        until = self.state.updating_until
        if until is not None and self.now >= until:
            self.state.updating_until = None
            self.state.updated_at = until
            self.toast("Updated")

    def status(self) -> Text | None:
        if self.state.updating_until is not None:
            return Text("Updating…", id="refresh_progress", style="caption")
        if self.state.updated_at is not None:
            hours, minutes = divmod(self.state.updated_at // 60 % 1440, 60)
            return Text(f"Updated at {hours:02d}:{minutes:02d}", id="updated_time", style="caption")
        return None

    # ------------------------------------------------------------------------------------ screens

    @screen(".activities.MainActivity")
    def forecast(self) -> Screen:
        city = self.state.city(self.state.current)
        return Screen(
            toolbar=Toolbar(
                title=city.name,
                actions=[ImageButton(id="open_locations", desc="Locations", kind="action",
                                     on_tap=partial(self.open, "locations"))],
                menu=[MenuItem("Refresh", on_tap=self.refresh_now),
                      MenuItem("Settings", on_tap=partial(self.open, "settings"))],
            ),
            body=[
                Column(pad_x=42, pad_y=24, children=[
                    Text(self.temperature(city.temp_c), id="current_temp", style="display"),
                    Text(SKIES[city.sky], id="current_sky"),
                    Text(f"Wind {self.wind_speed(city.wind_kmh)}", id="current_wind", style="caption"),
                    self.status(),
                ]),
                ListView(id="daily_list", items=[
                    ListItem(id="day_item", on_tap=partial(self.open, "day_details", day=i), children=[
                        Text(day, id="day_name", wrap=True),
                        Text(sky, id="day_sky"),
                        Text(f"{self.temperature(high)} / {self.temperature(low)}", id="day_range", wrap=True),
                    ])
                    for i, (day, sky, high, low) in enumerate(self.forecast_days(city))
                ]),
            ],
        )

    @screen(".activities.LocationsActivity")
    def locations(self) -> Screen:
        return Screen(
            toolbar=Toolbar(title="Locations", nav=self.back),
            body=[ListView(id="locations_list", empty=Text("No saved locations", id="locations_empty"), items=[
                ListItem(id="location_item", selected=c.id == self.state.current, on_tap=partial(self.show_city, c.id),
                         children=[
                             Column(children=[
                                 Text(c.name, id="location_name"),
                                 Text(self.temperature(c.temp_c), id="location_temp", style="caption"),
                             ]),
                             ImageButton(id="location_more", desc="More options", wrap=True,
                                         on_tap=partial(self.open, "location_options", city=c.id)),
                         ])
                for c in self.state.cities
            ])],
        )

    @screen(".activities.SettingsActivity")
    def settings(self) -> Screen:
        def row(ident: str, label: str, value: str, opens: str) -> ListItem:
            return ListItem(id=f"{ident}_row", on_tap=partial(self.open, opens), children=[
                Column(children=[Text(label, id=f"{ident}_label"), Text(value, id=f"{ident}_value", style="caption")])])

        return Screen(
            toolbar=Toolbar(title="Settings", nav=self.back),
            body=[
                row("units", "Units", self.state.units, "units"),
                row("wind", "Wind speed", self.state.wind, "wind"),
                row("refresh", "Refresh", self.state.refresh, "refresh"),
                row("theme", "Theme", self.state.theme, "theme"),
                ListItem(id="clear_history_row", on_tap=partial(self.open, "clear_history_confirm"), children=[
                    Column(children=[
                        Text("Clear search history", id="clear_history_label"),
                        Text(f"{len(self.state.history)} searches" if self.state.history else "Empty",
                             id="clear_history_value", style="caption"),
                    ])]),
            ],
        )

    # ------------------------------------------------------------------------------------ menus and dialogs

    @menu
    def location_options(self, city: int) -> Menu:
        return Menu(items=[
            MenuItem("Show forecast", on_tap=partial(self.show_city, city)),
            MenuItem("Remove", on_tap=partial(self.open, "remove_location", city=city)),
        ])

    # one dialog class for every setting, as real apps do: same layout and ids, other options
    @dialog
    def units(self) -> Dialog:
        return self.choice_dialog("Units", "choice_list", UNITS, self.state.units, partial(self.choose, "units"))

    @dialog
    def wind(self) -> Dialog:
        return self.choice_dialog("Wind speed", "choice_list", WIND, self.state.wind, partial(self.choose, "wind"))

    @dialog
    def refresh(self) -> Dialog:
        return self.choice_dialog("Refresh", "choice_list", REFRESH, self.state.refresh,
                                  partial(self.choose, "refresh"))

    @dialog
    def theme(self) -> Dialog:
        return self.choice_dialog("Theme", "choice_list", THEMES, self.state.theme, partial(self.choose, "theme"))

    @dialog
    def day_details(self, day: int) -> Dialog:
        city = self.state.city(self.state.current)
        name, sky, high, low = self.forecast_days(city)[day]
        return self.notice_dialog(name, message=f"{sky}, {self.temperature(high)} / {self.temperature(low)}, "
                                                f"wind {self.wind_speed(city.wind_kmh + day % 4 * 3)}")

    @dialog
    def clear_history_confirm(self) -> Dialog:
        return self.confirm_dialog("Clear search history?",
                                   f"{len(self.state.history)} recent searches will be forgotten.",
                                   ("Clear", self.clear_history))

    @dialog
    def remove_location(self, city: int) -> Dialog:
        return self.confirm_dialog("Remove location?", f"{self.state.city(city).name} will no longer be shown.",
                                   ("Remove", partial(self.remove_city, city)))


__all__ = ["WeatherApp", "WeatherState"]
