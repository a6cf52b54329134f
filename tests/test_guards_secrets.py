"""Secrets (core/secrets.py, runtime/guards, docs/safety.md): `secret("NAME")` comes from
`--secrets FILE` or `TAPIR_SECRET_NAME`, prints as `*****`, can only be typed (into a password
field unless `--allow secrets`), and never appears in what a run leaves behind: every artifact of
a `tapir run` and a `tapir test` (trace, JUnit, stdout, stderr, screenshots) and of a REPL session
is searched for the value."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import DeviceError, ScriptError, SecretRefused, UsageError
from tapir.core.safety import Safety
from tapir.core.secrets import MASK, Redactor, Secret, SecretStore, parse_dotenv
from tapir.docgen.loader import load_document
from tapir.docgen.symbols import build_symbols
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import RunResult, run_script
from tapir.runtime.connect import Connection, connect
from tapir.runtime.session import DeviceRuntime

REPO = Path(__file__).resolve().parent.parent
NOTES_DOC = REPO / "samples" / "notes" / "notes.yaml"
#: The secret of these tests: long enough that device messages would cut it (40 characters).
SECRET = "hunter2-Zebra-quartz-9f3c1d7a-long-enough-to-be-clipped"
LOGIN = ('pw = secret("NOTES_PASSWORD")\n'
         'print("typing", pw)\n'
         '$account_screen__email_input.set_text("ada@example.com")\n'
         "$account_screen__password_input.set_text(pw)\n"
         "$account_screen__sign_in_button.tap()\n"
         "print($account_screen__status_text.get_text())\n")


def _leaks(folder: Path, *texts: str) -> list[str]:
    """Every file under ``folder`` and every text given that holds the secret (or its first 12
    characters, as a cut message would)."""
    found = []
    needles = (SECRET.encode(), SECRET[:12].encode())
    for p in sorted(folder.rglob("*")):
        if p.is_file() and any(n in p.read_bytes() for n in needles):
            found.append(str(p))
    found += [f"text {i}" for i, t in enumerate(texts) if SECRET[:12] in t]
    return found


# -- the value ----------------------------------------------------------------------------------------------


def test_a_secret_shows_only_its_mask() -> None:
    s = Secret("PW", SECRET)
    assert str(s) == repr(s) == f"{s}" == f"{s:>20}" == MASK and s.reveal() == SECRET
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(s)


@pytest.mark.parametrize(("expression", "message"), [
    ('pw + "x"', "unsupported operand type(s) for +: 'secret' and 'str'"),
    ("len(pw)", "object of type 'secret' has no len()"),
    ("pw[0]", "'secret' object is not subscriptable"),
    ("pw.upper()", "'secret' object has no attribute 'upper'"),
    ("int(pw)", "int() argument must be a string or a real number, not 'secret'"),
    ('pw in "x"', "'in <string>' requires string as left operand, not secret"),
    ("{pw: 1}", "unhashable type: 'secret'"),
])
def test_a_script_cannot_take_a_secret_apart(expression: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPIR_SECRET_PW", SECRET)
    result = run_script(f'pw = secret("PW")\nx = {expression}\n', output=None)
    assert isinstance(result.error, ScriptError) and result.error.message == message
    assert SECRET not in result.error.render()


def test_printing_formatting_and_variables_keep_the_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPIR_SECRET_PW", SECRET)
    result = run_script('pw = secret("PW")\nprint(pw, str(pw), f"<{pw!r}>", "%s" % pw, "{}".format(pw), [pw])\n'
                        "items = [pw]\n", output=None)
    assert result.ok and result.printed == (f"{MASK} {MASK} <{MASK}> {MASK} {MASK} [{MASK}]",)
    assert result.variables == {"pw": MASK, "items": f"[{MASK}]"}


def test_where_secrets_are_looked_for(tmp_path: Path) -> None:
    env = {"TAPIR_SECRET_PW": "from-env", "PW": "plain-env", "TAPIR_SECRET_TOKEN": "tok"}
    file = tmp_path / ".secrets"
    file.write_text("# the test account\nexport PW='from file'\nAPI_KEY=\"a\\\"b\"\nPLAIN=x # comment\n")
    store = SecretStore.from_file(file, environ=env)
    assert store.get("PW").reveal() == "from file" and store.get("TOKEN").reveal() == "tok"
    assert store.get("API_KEY").reveal() == 'a"b' and store.get("PLAIN").reveal() == "x"
    assert store.names() == ["API_KEY", "PLAIN", "PW"]
    # the environment is read under its prefix only: a script cannot name the host's other variables
    bare = SecretStore(environ={"PW": "plain-env"})
    with pytest.raises(ScriptError) as info:
        bare.get("PW")
    assert info.value.message == "the secret 'PW' is not set: no environment variable TAPIR_SECRET_PW"
    assert info.value.hint == ("export TAPIR_SECRET_PW=... before the run, or put PW=... in a file named with "
                               "--secrets FILE")
    with pytest.raises(ScriptError, match=r"not in .*\.secrets, and no environment variable TAPIR_SECRET_NONE"):
        store.get("NONE")
    with pytest.raises(ScriptError, match="needs a name of letters, digits and '_'"):
        store.get("not a name")


def test_a_malformed_secrets_file_never_shows_its_lines(tmp_path: Path) -> None:
    file = tmp_path / "bad.env"
    file.write_text(f"GOOD=1\n{SECRET}\n")
    with pytest.raises(UsageError) as info:
        SecretStore.from_file(file)
    assert info.value.message == (f"{file}:2: expected NAME=value (a name of letters, digits and '_'); the line is "
                                  "not shown, it may hold a secret")
    with pytest.raises(UsageError, match="A is given twice"):
        parse_dotenv("A=1\nA=2\n", "f")
    with pytest.raises(UsageError, match="cannot read .*missing.env"):
        SecretStore.from_file(tmp_path / "missing.env")


def test_the_redactor_masks_the_forms_messages_quote() -> None:
    r = Redactor([SECRET, "it's\\x"])
    assert r.mask(f"typed {SECRET}!") == f"typed {MASK}!"
    assert r.mask(repr(SECRET[:40] + "...")) == f"'{MASK}...'"  # how runtime/device.py quotes typed text
    assert r.mask(repr("it's\\x")) == f'"{MASK}"'
    record = {"args": {"text": Secret("PW", SECRET)}, "list": [SECRET, 1], "n": 3}
    masked = r.mask_value(record)
    assert masked == {"args": {"text": MASK}, "list": [MASK, 1], "n": 3} and record["n"] == 3
    plain = {"a": "b", "c": [1]}
    assert r.mask_value(plain) is plain  # nothing to change: no copy


# -- on the device -----------------------------------------------------------------------------------------


class Login:
    def __init__(self, adb_port: int, tmp: Path, safety: Safety) -> None:
        self.doc = load_document(NOTES_DOC)
        self.safety = safety
        self.trace = tmp / "trace.jsonl"
        self.conn = Connection(device="sim:notes", document=self.doc, trace_path=str(self.trace), adb_port=adb_port,
                               safety=safety)
        self.runtime: DeviceRuntime | None = None

    def run(self, source: str) -> RunResult:
        def factory() -> DeviceRuntime:
            self.runtime = connect(self.conn)
            return self.runtime

        return run_script(source, factory, output=None, symbols=build_symbols(self.doc), filename="login.tap",
                          inputs=ScriptInputs(safety=self.safety))

    @property
    def app(self) -> Any:
        assert self.runtime is not None
        return self.runtime.simulator.device.app("org.tapir.notes")


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_secret_is_typed_for_real_into_the_password_field(adb_port: int, tmp_path: Path) -> None:
    store = SecretStore({"NOTES_PASSWORD": SECRET})
    run = Login(adb_port, tmp_path, Safety(secrets=store))
    result = run.run(LOGIN)
    assert result.ok, result.error and result.error.render()
    assert result.printed == (f"typing {MASK}", "Signed in as ada@example.com")
    assert run.app.state.account == "ada@example.com" and run.app.state.password == SECRET
    records = [json.loads(line) for line in run.trace.read_text().splitlines()]
    typed = [r for r in records if r.get("call") == "set_text" and r["element"].endswith("password_input")]
    assert typed[0]["args"] == {"text": MASK} and typed[0]["verified"] is True
    assert _leaks(tmp_path) == []


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_secret_is_refused_for_a_plain_field_unless_allowed(adb_port: int, tmp_path: Path) -> None:
    source = '$account_screen__email_input.set_text(secret("NOTES_PASSWORD"))\n'
    run = Login(adb_port, tmp_path, Safety(secrets=SecretStore({"NOTES_PASSWORD": SECRET})))
    result = run.run(source)
    assert isinstance(result.error, SecretRefused)
    assert result.error.message == (
        "secret('NOTES_PASSWORD') was not typed into $account_screen__email_input: it is not a password field (the "
        "screen shows what is typed there, and dumps and screenshots keep it); nothing was typed")
    assert result.error.hint == ("type secrets into password fields; if this field is meant for one (a PIN, a "
                                 "one-time code), allow it with --allow secrets, or allow('secrets') in the script")
    assert run.runtime is not None
    assert not [c for c in run.runtime.simulator.device.log if c.startswith("input text")]
    guard = [json.loads(line) for line in run.trace.read_text().splitlines() if '"guard"' in line]
    assert [(g["guard"], g["name"], g["decision"]) for g in guard] == [("secret", "NOTES_PASSWORD", "refused")]
    # allowed: typed, and what the field shows comes back masked to the script
    run = Login(adb_port, tmp_path / "2", Safety.from_options(allow=["secrets"]))
    run.safety.secrets = SecretStore({"NOTES_PASSWORD": SECRET})
    (tmp_path / "2").mkdir()
    result = run.run(source + "print($account_screen__email_input.get_text())\n")
    assert result.ok and result.printed == (MASK,) and run.app.field("email") == SECRET
    assert _leaks(tmp_path) == []


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_device_error_quoting_the_typed_text_is_masked(adb_port: int, tmp_path: Path) -> None:
    """`input text` is ASCII only: a non-ASCII secret without ADBKeyBoard is a device error whose
    message quotes (the start of) the text typed."""
    secret = "pässwort-" + SECRET
    run = Login(adb_port, tmp_path, Safety(secrets=SecretStore({"NOTES_PASSWORD": secret})))
    result = run.run(LOGIN)
    assert isinstance(result.error, DeviceError)
    assert "cannot type '*****...': `input text` handles ASCII only" in result.error.message
    assert secret[:12] not in result.error.render() and _leaks(tmp_path) == []
    assert secret[:12] not in run.trace.read_text()


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_no_artifact_of_a_run_holds_the_secret(adb_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tapir.cli import main

    work = tmp_path / "work"
    work.mkdir()
    secrets = tmp_path / "secrets.env"  # outside the folder searched
    secrets.write_text(f"NOTES_PASSWORD={SECRET}\n")
    script = work / "login.tap"
    script.write_text(f"# doc: {NOTES_DOC}\n{LOGIN}screenshot('signed in')\n")
    code = main(["run", str(script), "--device", "sim:notes", "--adb-port", str(adb_port), "--secrets", str(secrets),
                 "--trace", str(work / "run.jsonl"), "--artifacts", str(work / "shots"), "--stats"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == f"typing {MASK}\nSigned in as ada@example.com\n"
    assert MASK in (work / "run.jsonl").read_text() and (work / "shots" / "signed_in.png").is_file()
    assert _leaks(work, out, err) == []

    # tapir test: the secret from the environment, typed into the email field (allowed), then an
    # assert that fails quoting what the field shows: JUnit, the trace and -v output stay masked
    monkeypatch.setenv("TAPIR_SECRET_NOTES_PASSWORD", SECRET)
    failing = work / "tests" / "login_test.tap"
    failing.parent.mkdir()
    failing.write_text(f"# doc: {NOTES_DOC}\n# allow: secrets\npw = secret('NOTES_PASSWORD')\nprint(pw)\n"
                       "$account_screen__email_input.set_text(pw)\n"
                       "assert $account_screen__email_input.get_text() == 'ada', $account_screen__email_input"
                       ".get_text()\n")
    code = main(["test", str(failing), "-v", "--junit", str(work / "junit.xml"), "--trace-dir", str(work / "traces"),
                 "--artifacts", str(work / "artifacts"), "--html", str(work / "report.html")])
    out, err = capsys.readouterr()
    assert code == 1 and "AssertionFailed" in out and MASK in out
    junit = (work / "junit.xml").read_text()
    assert "AssertionFailed" in junit and MASK in junit
    assert list((work / "traces").glob("*.jsonl"))
    # the failure's artifacts (error, trace, the hierarchy dump: the field shows the secret) and the HTML report
    assert len(list((work / "artifacts").rglob("hierarchy.xml"))) == 1 and (work / "report.html").is_file()
    assert _leaks(work, out, err) == []


@pytest.mark.adb
@pytest.mark.timeout(120)
def test_a_repl_session_shows_and_keeps_only_the_mask(adb_port: int, tmp_path: Path) -> None:
    from tapir.repl.session import ReplSession

    out, err = io.StringIO(), io.StringIO()
    safety = Safety(secrets=SecretStore({"NOTES_PASSWORD": SECRET}))
    trace = tmp_path / "repl.jsonl"
    session = ReplSession(device="sim:notes", document=NOTES_DOC, out=out, err=err, adb_port=adb_port,
                          cwd=tmp_path, safety=safety, trace=str(trace))
    try:
        for line in ('pw = secret("NOTES_PASSWORD")', "pw", 'allow("secrets")',
                     "$account_screen__email_input.set_text(pw)", ":tree", ":screen",
                     '$account_screen__email_input.set_text("ada@example.com")',
                     "$account_screen__password_input.set_text(pw)", "$account_screen__sign_in_button.tap()",
                     ":vars", ":trace 10", ":screen", ":tree"):
            assert session.handle(line), err.getvalue()
        # the email field showed the secret (allowed): :tree printed the mask in its place
        assert f"EditText #email_input '{MASK}'" in out.getvalue() or f"'{MASK}'" in out.getvalue()
        assert session.link.runtime().simulator.device.app("org.tapir.notes").state.password == SECRET
        assert not session.handle("pw + 'x'")
        assert out.getvalue().splitlines()[0] == MASK  # the echo of `pw`
        assert any(line.split() == ["pw", "=", MASK] for line in out.getvalue().splitlines()), out.getvalue()
        session.handle(f":save {tmp_path / 'saved.tap'}")
    finally:
        session.close()
    assert "secret(\"NOTES_PASSWORD\")" in (tmp_path / "saved.tap").read_text()
    assert _leaks(tmp_path, out.getvalue(), err.getvalue()) == []
