"""The ``recording-finalize`` console script: argparse and dispatch, nothing else.

Every command is a ``cliutil.Command`` in a module of its own; ``COMMANDS`` lists them in
``--help`` order. The modules that load boto3, librdkafka and yoyo are imported inside the
commands that use them, so ``--help`` and a configuration error answer at once.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import textwrap
from collections.abc import Sequence

import psycopg

from . import cliutil, config, logs, tracing, worker
from .db import refusal, server_message
from .errors import describe
from .install import migrate, rollback, service_sql, uninstall, wait
from .ops import audit, explain, incidents, pause, prune, requeue, status

COMMANDS: tuple[cliutil.Command, ...] = (
    migrate.COMMAND,
    worker.RUN,
    worker.RUN_ONCE,
    requeue.REQUEUE,
    status.COMMAND,
    incidents.COMMAND,
    explain.COMMAND,
    audit.COMMAND,
    requeue.RETRY,
    pause.PAUSE,
    pause.RESUME,
    prune.COMMAND,
    service_sql.COMMAND,
    uninstall.COMMAND,
    rollback.COMMAND,
    wait.COMMAND,
)

DESCRIPTION = """\
Safety net of the messenger service: drives call recordings stuck in Recording/Uploading to
Available or Failed (checking the binary in S3), republishes lost call-recording-available
events, and relays its own outbox (recording_finalize.outbox, the product's events only) to
Kafka.
"""

EXIT_CODES = """\
exit codes:
  0  success
  2  bad configuration or usage (the message names the variable and its rule);
     nothing was connected to
  1  failure"""


#: DATABASE_URL as an operator's command reads it: the worker's login is refused there.
_OPERATOR_LOGIN = ("the database, as an operator's login (a role granted "
                   "recording_finalize_operator); its password is never printed")


def _environment_help(command: cliutil.Command) -> str:
    lines = [
        "environment (a flag, where listed, overrides its variable; durations are a number of",
        "seconds or a number with ms/s/m/h: 90, 250ms, 5m, 1h):",
    ]
    for name in command.variables:
        spec = config.VARIABLE_BY_NAME[name]
        default = ("required" if name in command.required else "default: unset"
                   if spec.default is None else f"default: {spec.default}")
        flag = f", flag {spec.flag}" if spec.flag and name in command.flags else ""
        lines.append(f"  {name}  ({default}{flag})")
        rule = spec.rule.text.replace(config.DURATION_RULE, "a duration").replace(
            config.DURATION_DAYS_RULE, "a duration (also in days: 30d)")
        about = command.variable_help.get(name) or (
            _OPERATOR_LOGIN if name == "DATABASE_URL" and command.for_operators else spec.help)
        lines += textwrap.wrap(f"{about}; {rule}", width=94, initial_indent="      ",
                               subsequent_indent="      ")
    if command.env_note:
        lines.append(command.env_note)
    return "\n".join(lines)


_FORMATTER = functools.partial(argparse.RawDescriptionHelpFormatter, max_help_position=32,
                               width=100)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=cliutil.PROG,
        description=DESCRIPTION,
        epilog="Run `recording-finalize COMMAND --help` for a command's variables and flags.\n\n"
        + EXIT_CODES,
        formatter_class=_FORMATTER,
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, default=argparse.SUPPRESS,
                        help="print the package version, the schema version it ships, the "
                        "commit it was built from and its SQL fingerprint")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        cmd = sub.add_parser(
            command.name, help=command.summary, description=command.description,
            epilog="\n\n".join([*([command.exits.rstrip()] if command.exits else []),
                                _environment_help(command), EXIT_CODES]),
            formatter_class=_FORMATTER,
        )
        command.add_arguments(cmd)
        for variable in command.flags:
            spec = config.VARIABLE_BY_NAME[variable]
            flag = spec.flag or "--sql-dir"
            metavar = ("DURATION" if spec.is_duration else
                       "N" if spec.rule.text.startswith("an integer") else "VALUE")
            cmd.add_argument(flag, dest=variable, metavar=metavar, default=None,
                             help=f"overrides {variable}")
    return parser


class _VersionAction(argparse.Action):
    """``--version``: computed only when asked, not for every parser built."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        # The version line, then the build: a development build says so, the commit and the
        # fingerprints (CHANGELOG.md records both of each release).
        from pathlib import Path

        from .buildinfo import commit, is_development, package_fingerprint, sql_fingerprint
        from .drift import package_version, shipped

        sql_dir = config.packaged_sql_dir()
        version = package_version()
        if sql_dir is None:
            lines = [f"{cliutil.PROG} {version} (schema: none, this installation ships no sql/)"]
        else:
            package = shipped(sql_dir)
            lines = [f"{cliutil.PROG} {package.version} (schema {package.schema_version}: "
                     f"{len(package.migrations)} migrations, {len(package.functions)} function "
                     "files)"]
        if is_development(version):
            lines.append("development build: unreleased work, not a release")
        lines.append(f"commit: {commit()}")
        if sql_dir is not None:
            lines += [f"package fingerprint: "
                      f"{package_fingerprint(Path(__file__).resolve().parent, sql_dir)}",
                      f"sql fingerprint: {sql_fingerprint(sql_dir)}"]
        print("\n".join(lines))
        parser.exit(cliutil.EXIT_OK)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``status | head -1``): no traceback, and no second failure
        # when Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return cliutil.EXIT_FAILURE
    return code


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = {command.name: command for command in COMMANDS}[args.command]
    if command.check_args is not None:
        try:
            command.check_args(args)
        except cliutil.UsageError as err:
            return cliutil.fail(str(err), cliutil.EXIT_USAGE)
    overrides = {name: value for name in command.flags
                 if (value := getattr(args, name, None)) is not None}
    try:
        settings = config.load_settings(os.environ, overrides,
                                        database_required="DATABASE_URL" in command.required)
        if command.prepare is not None:
            command.prepare(settings)
    except (config.ConfigError, tracing.TracingConfigError) as err:
        # ConfigError masks secret values itself; its rule texts may show a URL form.
        return cliutil.fail(f"configuration error: {err}", cliutil.EXIT_USAGE, redact=False)
    logs.add_secrets(settings.secrets())
    logs.capture_library_logs()
    try:
        return command.handler(args, settings)
    except psycopg.Error as err:
        if err.sqlstate is None and (meaning := refusal(err)) is not None:
            # The server refused the connection itself (password, CONNECT, no such database):
            # a configuration error, which waiting does not fix.
            return cliutil.fail(f"the database refused the connection: {meaning}. The server "
                                f"said: {server_message(err)}", cliutil.EXIT_USAGE)
        hint = ""
        if err.sqlstate == "42501" and command.for_operators:
            hint = (f"; `{command.name}` is an operator's command: log in as a role granted "
                    "recording_finalize_operator")
        return cliutil.fail(f"database error: {describe(err)}: {err}{hint}")


if __name__ == "__main__":
    sys.exit(main())
