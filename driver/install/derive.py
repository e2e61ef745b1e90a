"""What the installed adapter needs of the service's tables, read from the database: the GRANTs
``service-sql grants`` prints for a DBA's adapter and the REVOKEs uninstall prints; and what
``service-sql recommended`` is written on (``recordings_view``: the table the recordings view
reads and the expression of each of its columns, read from the catalog alone, so that any login
that may read pg_catalog gets it).

- a view's reads: ``pg_depend`` through its rewrite rule names every table column it reads;
- a function's writes: PL/pgSQL and SQL bodies are not in ``pg_depend``, so the body is read:
  each ``insert into``, ``update``, ``delete from`` target and its columns, each ``from``/``join``
  relation and the columns it is read by, resolved with ``to_regclass`` under the function's
  own ``search_path`` (``_statements``; dynamic SQL is named, not derived);
- the triggers of each table written that run with the invoker's rights (SECURITY INVOKER): the
  same, for what their functions write;
- the product locks the recordings it moves through the ``recordings`` view (``FOR NO KEY
  UPDATE``), which needs UPDATE on a column of each relation that lock reaches: those of the
  view's FROM clause, read from its rule (``locked_relations``); a table the view reads only in
  a sub-select (a scalar subquery of its select list) is not locked and needs SELECT only;
- row-level security on a table read or written: a policy that lets the role see and change
  every row (the adapter's views decide what the product sees);
- the sequences behind the defaults of the columns an INSERT leaves to the table.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg

from .. import adapter, contract
from ..drift import query

_IDENT = r'(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)'
_QNAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})?"
# Words that may follow a relation's name and are not its alias.
_NOT_ALIAS = (r"(?:set|where|values|select|default|on|using|returning|join|inner|left|right|"
              r"full|cross|natural|lateral|group|order|limit|offset|union|except|intersect|"
              r"window|having|for|overriding|as|when|then|else|end|loop|into|and|or|not)\b")
_ALIAS = rf"(?:\s+(?:as\s+)?(?!{_NOT_ALIAS})({_IDENT}))?"
_INSERT = re.compile(rf"\binsert\s+into\s+({_QNAME}){_ALIAS}\s*(\(([^()]*)\))?")
_UPDATE = re.compile(rf"\bupdate\s+(?:only\s+)?({_QNAME}){_ALIAS}\s+set\b")
_DELETE = re.compile(rf"\bdelete\s+from\s+(?:only\s+)?({_QNAME}){_ALIAS}")
_READ = re.compile(rf"\b(?:from|join)\s+(?:only\s+)?({_QNAME}){_ALIAS}")
_WORD = re.compile(rf"(?<![.\w$\"]){_IDENT}(?!\s*[.(])")
_SET_END = re.compile(r"\b(?:from|where|returning)\b")
# Trigger events (pg_trigger.tgtype bits).
_TG = {"insert": 4, "delete": 8, "update": 16}


def normalize(body: str) -> str:
    """``body`` without comments, its string and dollar-quoted literals emptied (``''``), lower
    case outside quoted identifiers."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if body.startswith("--", i):
            i = body.find("\n", i)
            i = n if i < 0 else i
        elif body.startswith("/*", i):
            end = body.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c == "'":
            j = i + 1
            while j < n and (body[j] != "'" or body.startswith("''", j)):
                j += 2 if body.startswith("''", j) else 1
            out.append("''")
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and (body[j] != '"' or body.startswith('""', j)):
                j += 2 if body.startswith('""', j) else 1
            out.append(body[i:j + 1])
            i = j + 1
        elif c == "$" and (m := re.match(r"\$([a-zA-Z_]\w*)?\$", body[i:])):
            end = body.find(m[0], i + len(m[0]))
            out.append("''")
            i = n if end < 0 else end + len(m[0])
        else:
            out.append(c.lower())
            i += 1
    return "".join(out)


def _span_end(text: str, start: int) -> int:
    """Where the statement that starts at ``start`` ends: a ``;`` at its depth, or the ``)``
    that closes the parenthesis it is in (a CTE's body)."""
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth < 0:
                return j
        elif text[j] == ";" and depth == 0:
            return j
    return len(text)


def _depths(text: str) -> Iterator[tuple[int, str, int | None]]:
    """Each character of ``text`` with how many parentheses are open before it; None inside a
    literal or a quoted name (its quotes included)."""
    depth, quote_char = 0, ""
    for j, c in enumerate(text):
        if quote_char or c in "'\"":
            yield j, c, None
            quote_char = "" if c == quote_char else quote_char or c
            continue
        depth -= c == ")"
        yield j, c, depth
        depth += c == "("


def _split_top(text: str, separator: str = ",") -> list[str]:
    """``text`` split at ``separator`` outside parentheses and quotes."""
    cuts = [j for j, c, depth in _depths(text) if c == separator and depth == 0]
    return [text[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


@dataclass
class Statement:
    """One write or read found in a body: the relation as written, the verb, the columns it
    writes (None: every column), the name the body reads its columns by, the text around."""

    relation: str
    verb: str  # insert, update, delete, select
    columns: list[str] | None
    alias: str
    text: str


def statements(body: str) -> tuple[list[Statement], bool]:
    """Every write and read of ``body`` (normalized), and whether it runs dynamic SQL."""
    text = normalize(body)
    found: list[Statement] = []
    blanked = list(text)  # the body without the written column lists (not reads)

    def blank(start: int, end: int) -> None:
        blanked[start:end] = " " * (end - start)

    for m in _INSERT.finditer(text):
        columns = None if m[3] is None else [_unquote(c.strip()) for c in m[4].split(",")]
        if m[3] is not None:
            blank(m.start(3), m.end(3))
        found.append(Statement(m[1], "insert", columns, m[2] or m[1], ""))
    for m in _UPDATE.finditer(text):
        end = _span_end(text, m.start())
        body_text = text[m.end():end]
        stop = _SET_END.search(body_text)
        set_list = body_text[:stop.start()] if stop else body_text
        columns = []
        offset = m.end()
        for item in _split_top(set_list):
            lhs = item.split("=", 1)[0]
            columns += [_unquote(c) for c in re.findall(_IDENT, lhs)]
            blank(offset, offset + len(lhs))
            offset += len(item) + 1
        found.append(Statement(m[1], "update", columns, m[2] or m[1], text[m.end():end]))
    for m in _DELETE.finditer(text):
        end = _span_end(text, m.start())
        found.append(Statement(m[1], "delete", None, m[2] or m[1], text[m.end():end]))
    reads = "".join(blanked)
    for m in _READ.finditer(reads):
        found.append(Statement(m[1], "select", None, m[2] or m[1], reads))
    for s in found:
        if s.verb in ("update", "delete"):
            s.text = reads
    dynamic = re.search(r"\bexecute\b", text) is not None
    return found, dynamic


@dataclass
class Table:
    oid: int
    name: str  # quoted and qualified
    kind: str
    rls: bool
    columns: list[str]
    select: set[str] = field(default_factory=set)
    insert: set[str] = field(default_factory=set)
    update: set[str] = field(default_factory=set)
    delete: bool = False
    whole_insert: bool = False
    why: set[str] = field(default_factory=set)


@dataclass
class Needs:
    """What the adapter needs, table by table, and what could not be derived."""

    tables: dict[int, Table] = field(default_factory=dict)
    schemas: set[str] = field(default_factory=set)
    sequences: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    #: Tables with row-level security and no policy naming the role.
    policies: list[str] = field(default_factory=list)
    #: Every table with row-level security the adapter reaches.
    rls: list[str] = field(default_factory=list)


_OWN_SCHEMAS = frozenset(contract.PRODUCT_SCHEMAS) | {"pg_catalog", "information_schema"}


def _table(conn: psycopg.Connection[Any], needs: Needs, name: str, search_path: str
           ) -> Table | None:
    """The service's table (or view) ``name`` resolves to, or None (a CTE, a function's result,
    a relation of the product's own schemas)."""
    parts = [_unquote(p) for p in re.findall(_IDENT, name)]
    if len(parts) == 2 and parts[0] in _OWN_SCHEMAS:
        # Not looked up: a login without USAGE on the product's schemas (the service's owner)
        # would be refused, and nothing of them is granted here.
        return None
    with conn.transaction():
        conn.execute(query("set_local_search_path"), (search_path,))
        row = conn.execute(query("resolve_relation"), (name,)).fetchone()
    if row is None:
        return None
    oid, schema, qualified, kind, rls, columns = row
    if str(schema) in _OWN_SCHEMAS or str(schema).startswith("pg_temp"):
        return None
    if int(oid) not in needs.tables:
        needs.tables[int(oid)] = Table(int(oid), str(qualified), str(kind), bool(rls),
                                       [str(c) for c in columns])
        needs.schemas.add(str(schema))
    return needs.tables[int(oid)]


def _read_columns(table: Table, alias: str, text: str) -> set[str]:
    """The columns of ``table`` that ``text`` reads: ``alias.column``, and a bare name that is
    one of its columns."""
    qualified = {_unquote(c) for c in re.findall(
        rf"(?<![\w$]){re.escape(alias)}\s*\.\s*({_IDENT})", text)}
    bare = {_unquote(w) for w in _WORD.findall(text)}
    return {c for c in table.columns if c in qualified or c in bare}


def _function_needs(conn: psycopg.Connection[Any], needs: Needs, where: str, body: str,
                    search_path: str, depth: int = 0) -> None:
    found, dynamic = statements(body)
    if dynamic:
        needs.notes.append(f"{where} runs dynamic SQL (EXECUTE): what it reads and writes is "
                           "not derived here; grant it by hand")
    for s in found:
        table = _table(conn, needs, s.relation, search_path)
        if table is None:
            continue
        table.why.add(f"{s.verb} by {where}")
        if s.verb == "insert":
            if s.columns is None:
                table.whole_insert = True
            else:
                table.insert |= {c for c in s.columns if c in table.columns}
            _sequences(conn, needs, table, s.columns)
        elif s.verb == "update":
            table.update |= {c for c in s.columns or () if c in table.columns}
        elif s.verb == "delete":
            table.delete = True
        if s.verb != "insert":
            table.select |= _read_columns(table, _unquote(s.alias.split(".")[-1]), s.text)
        if s.verb in ("insert", "update", "delete") and depth < 3:
            _trigger_needs(conn, needs, table, s.verb, depth + 1)


def _trigger_needs(conn: psycopg.Connection[Any], needs: Needs, table: Table, verb: str,
                   depth: int) -> None:
    """What the invoker's triggers on ``table`` for ``verb`` write (a SECURITY DEFINER
    trigger function writes with its owner's rights: nothing to grant)."""
    for name, tgtype, body, definer, language, search_path in conn.execute(
            query("table_triggers"), (table.oid,)):
        if not int(tgtype) & _TG[verb] or definer:
            continue
        if str(language) not in ("plpgsql", "sql"):
            needs.notes.append(f"trigger {name} on {table.name} runs {language}: what it writes "
                               "is not derived here; grant it by hand")
            continue
        _function_needs(conn, needs, f"trigger {name} on {table.name}", str(body),
                        str(search_path), depth)


def _sequences(conn: psycopg.Connection[Any], needs: Needs, table: Table,
               inserted: list[str] | None) -> None:
    for column, sequence in conn.execute(query("table_default_sequences"), (table.oid,)):
        if inserted is None or str(column) not in inserted:
            needs.sequences.add(str(sequence))


def derive(conn: psycopg.Connection[Any], role: str) -> Needs:
    """What the adapter installed in this database needs of the service's tables."""
    needs = Needs()
    locked_through_recordings = locked_relations(conn, "recordings")
    for view, table_name, schema, column in conn.execute(query("adapter_view_reads"),
                                                         (adapter.SCHEMA,)):
        if str(schema) in _OWN_SCHEMAS:
            continue
        table = _table(conn, needs, str(table_name), "pg_catalog")
        if table is None:
            continue
        table.why.add(f"read by view {adapter.SCHEMA}.{view}")
        if column is None:
            table.select |= set(table.columns)
        else:
            table.select.add(str(column))
        if str(view) == "recordings" and table.oid in locked_through_recordings:
            table.why.add("locked through view recordings (FOR NO KEY UPDATE)")
    for name, language, body, search_path in conn.execute(query("adapter_functions"),
                                                          (adapter.SCHEMA,)):
        where = f"{adapter.SCHEMA}.{name}"
        if str(language) not in ("plpgsql", "sql"):
            needs.notes.append(f"{where} is written in {language}: what it writes is not "
                               "derived here; grant it by hand")
            continue
        _function_needs(conn, needs, where, str(body), str(search_path))
    for table in needs.tables.values():
        if table.oid in locked_through_recordings and not table.update:
            needs.notes.append(f"{table.name}: the product locks its rows through view "
                               "recordings (FOR NO KEY UPDATE), which needs UPDATE on one of "
                               "its columns, and no adapter function updates it")
    needs.rls = sorted(t.name for t in needs.tables.values() if t.rls)
    needs.policies = [str(name) for (name,) in conn.execute(query("tables_without_policy"), (
        [t.oid for t in needs.tables.values() if t.rls], role))]
    return needs


def locked_relations(conn: psycopg.Connection[Any], view: str) -> set[int]:
    """The relations (oids) whose rows ``SELECT … FROM`` the adapter's ``view`` ``FOR NO KEY
    UPDATE`` locks, read from its rule in the catalog: as PostgreSQL's rewriter marks them, each
    relation of the view's FROM clause (its joins, and those of a subquery there), and none
    that it reads only in a sub-select elsewhere (a scalar subquery of its select list, an
    EXISTS) or a WITH query. Those need SELECT only."""
    row = conn.execute(query("adapter_view_rule"), (adapter.SCHEMA, view)).fetchone()
    if row is None:
        return set()
    tree = _node_tree(str(row[0]))
    return _from_relations(tree[0]) if isinstance(tree, list) and tree else set()


#: RangeTblEntry.rtekind (parsenodes.h): a relation, a subquery in FROM.
_RTE_RELATION, _RTE_SUBQUERY = "0", "1"

#: A parsed pg_node_tree: a node (its fields, its type under ``""``), a list, a token, or None.
_Node = dict[str, Any] | list[Any] | str | None


def _from_relations(query_node: Any) -> set[int]:
    """The relations a locking clause on ``query_node`` (a Query) reaches through its FROM."""
    rtable = query_node.get("rtable") or []
    found: set[int] = set()

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        if node[""] == "RANGETBLREF":
            entry = rtable[int(node["rtindex"]) - 1]
            if entry.get("rtekind") == _RTE_RELATION:
                found.add(int(entry["relid"]))
            elif entry.get("rtekind") == _RTE_SUBQUERY:
                found.update(_from_relations(entry["subquery"]))
        elif node[""] == "FROMEXPR":
            for item in node.get("fromlist") or []:
                walk(item)
        elif node[""] == "JOINEXPR":
            walk(node.get("larg"))
            walk(node.get("rarg"))

    walk(query_node.get("jointree"))
    return found


def _node_tree(text: str) -> _Node:
    """``text`` (pg_node_tree, as outfuncs.c writes it) parsed: ``{NAME :field value …}`` a
    dict, ``(…)`` a list, ``<>`` None, any other token a string. A value of several tokens
    (a constant's bytes) is kept as a list."""
    # Tokens as pg_strtok cuts them: a backslash escapes the next character.
    tokens = re.findall(r"[(){}]|(?:\\.|[^\s(){}\\])+", text)
    position = 0

    def value() -> _Node:
        nonlocal position
        token = tokens[position]
        position += 1
        if token == "{":
            node: dict[str, Any] = {"": tokens[position]}
            position += 1
            while tokens[position] != "}":
                name = tokens[position][1:]
                position += 1
                items = []
                while tokens[position] != "}" and not tokens[position].startswith(":"):
                    items.append(value())
                node[name] = items[0] if len(items) == 1 else items or None
            position += 1
            return node
        if token == "(":
            items = []
            while tokens[position] != ")":
                items.append(value())
            position += 1
            return items
        return None if token == "<>" else token

    return value()


def _columns(names: Iterable[str]) -> str:
    return ", ".join(_ident(c) for c in sorted(names))


def quote(name: str) -> str:
    """``name`` as an SQL identifier (quoted only when it must be)."""
    return _ident(name)


def _ident(name: str) -> str:
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def grant_lines(needs: Needs, role: str) -> list[str]:
    """The GRANTs (and policies) of ``needs`` for ``role``, table by table, with why."""
    lines: list[str] = []
    for schema in sorted(needs.schemas - {contract.SCHEMA}):
        lines += [f"-- schema {schema}: the adapter reads or writes tables in it.",
                  f"grant usage on schema {_ident(schema)} to {role};", ""]
    for table in sorted(needs.tables.values(), key=lambda t: t.name):
        lines.append(f"-- {table.name}: {'; '.join(sorted(table.why))}.")
        if table.select:
            lines.append(f"grant select ({_columns(table.select)}) on {table.name} to {role};")
        if table.whole_insert:
            lines.append(f"grant insert on {table.name} to {role};")
        elif table.insert:
            lines.append(f"grant insert ({_columns(table.insert)}) on {table.name} to {role};")
        if table.update:
            lines.append(f"grant update ({_columns(table.update)}) on {table.name} to {role};")
        if table.delete:
            lines.append(f"grant delete on {table.name} to {role};")
        if table.name in needs.policies:
            lines += [
                f"-- Row-level security is on for {table.name} and no policy names {role}: the "
                "product would see none of its rows. The adapter's views decide what the "
                "product sees; this policy lets it read and change the rows the adapter's "
                "statements reach.",
                f"drop policy if exists recording_finalize_all_rows on {table.name};",
                f"create policy recording_finalize_all_rows on {table.name} as permissive for "
                f"all to {role} using (true) with check (true);"]
        lines.append("")
    if needs.sequences:
        lines.append("-- The sequences behind the defaults of the columns the adapter's INSERTs "
                     "leave to the table.")
        lines += [f"grant usage on sequence {s} to {role};" for s in sorted(needs.sequences)]
        lines.append("")
    for note in needs.notes:
        lines.append(f"-- NOT DERIVED: {note}.")
    return wrap(lines)


def revoke_lines(needs: Needs, role: str) -> list[str]:
    """What takes back ``grant_lines`` (only this grantor's grants go)."""
    lines = [f"revoke all on schema {contract.SCHEMA} from {role};"]
    lines += [f"revoke all on schema {_ident(s)} from {role};"
              for s in sorted(needs.schemas - {contract.SCHEMA})]
    for table in sorted(needs.tables.values(), key=lambda t: t.name):
        lines.append(f"revoke all on {table.name} from {role};")
        if table.name in needs.rls:
            lines.append(f"drop policy if exists recording_finalize_all_rows on {table.name};")
    lines += [f"revoke all on sequence {s} from {role};" for s in sorted(needs.sequences)]
    return lines


def wrap(lines: Iterable[str], width: int = 100) -> list[str]:
    """Each comment and statement of ``lines`` wrapped to ``width`` (psql runs them as they are:
    a statement continues on indented lines)."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
        elif line.startswith("-- "):
            out += textwrap.wrap(line[3:], width=width, initial_indent="-- ",
                                 subsequent_indent="-- ", break_on_hyphens=False,
                                 break_long_words=False)
        else:
            # Never broken inside a literal or a quoted name: their spaces are kept apart.
            kept = _QUOTED.sub(lambda m: m[0].replace(" ", "\0"), line)
            out += [part.replace("\0", " ") for part in textwrap.wrap(
                kept, width=width, subsequent_indent="    ", break_on_hyphens=False,
                break_long_words=False)]
    return out


_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")


# ------------------------------------------------------------------------------------------
# The recordings view as the catalog tells it: what `service-sql recommended` is derived from.

_LITERAL = re.compile(r"('(?:[^']|'')*')")


@dataclass(frozen=True)
class RecordingsView:
    """The adapter's ``recordings`` view: the one table it reads (``schema``, ``name`` unquoted;
    ``table`` quoted and qualified) and, for each of its columns, the expression it computes
    it by, as PostgreSQL prints it, on the row of that table named ``alias``."""

    schema: str
    name: str
    table: str
    alias: str
    expressions: dict[str, str]

    def on(self, column: str, row: str = "") -> str | None:
        """The view's ``column`` as an expression on the table's own row: its columns bare
        (``row=""``: an index's) or prefixed (``"old."`` in a trigger); None when the view's
        expression for it reads something else than that row (a subquery)."""
        expression = self.expressions.get(column)
        if expression is None or re.search(r"\bSELECT\b", expression):
            return None
        prefix = re.compile(rf'(?<![\w$".]){re.escape(self.alias)}\.(?={_IDENT})')
        return "".join(part if i % 2 else prefix.sub(row, part)
                       for i, part in enumerate(_LITERAL.split(expression)))

    def columns_of(self, column: str) -> list[str]:
        """The table's columns the view's ``column`` reads (as printed: quoted when they must
        be)."""
        expression = _LITERAL.sub("''", self.expressions.get(column, ""))
        return sorted(set(re.findall(rf'(?<![\w$".]){re.escape(self.alias)}\.({_IDENT})',
                                     expression)))


def recordings_view(conn: psycopg.Connection[Any]) -> RecordingsView | str | None:
    """The adapter's recordings view read from the catalog alone; None without one, or why it
    cannot be read as a view of one table."""
    with conn.transaction():
        # Every relation printed with its schema, whatever the login's search_path.
        conn.execute(query("set_local_search_path"), ("pg_catalog",))
        row = conn.execute(query("recordings_view"), (adapter.SCHEMA,)).fetchone()
    if row is None:
        return None
    definition, schemas, names = str(row[0]), list(row[1]), list(row[2])
    if not names:
        return f"the view {adapter.SCHEMA}.recordings reads no table"
    # The select list ends at the first FROM outside parentheses (EXTRACT(epoch FROM x) is in).
    select = next((m for m in re.finditer(r"\s+FROM\s+", definition)
                   if _depth(definition, m.start()) == 0), None)
    head = re.match(r"\s*SELECT\s+", definition)
    items = [item for item in _split_top(definition[head.end():select.start()]) if item.strip()
             ] if select and head else []
    rest = definition[select.end():].rstrip().rstrip(";") if select else ""
    # The one table of its FROM. Other relations it depends on may be read only in a scalar
    # sub-select (docs/install.md allows one in the select list: the session's uuid read from
    # the sessions table); a column computed so is never an index's expression (``on`` says
    # None). A join, or a FROM that names none of them first, is not a view of one table.
    found = [(schema, name, match) for schema, name in zip(schemas, names, strict=True)
             if (match := re.match(rf"(?:ONLY\s+)?{re.escape(f'{_ident(schema)}.{_ident(name)}')}"
                                   rf"(?:\s+(?:AS\s+)?({_IDENT}))?(?![\w.])", rest))]
    joined = any(_depth(rest, m.start()) == 0 for m in re.finditer(r"\bJOIN\b", rest))
    if len(names) != 1 and (len(found) != 1 or joined):
        return (f"the view {adapter.SCHEMA}.recordings reads {len(names)} relations, not one "
                "table")
    schema, name, source = found[0] if found else (schemas[0], names[0], None)
    table = f"{_ident(schema)}.{_ident(name)}"
    if not items or source is None or len(_split_top(rest)) != 1:
        return (f"the definition of {adapter.SCHEMA}.recordings is not a select list over "
                f"{table} alone")
    alias = source[1] or _ident(name)
    expressions: dict[str, str] = {}
    for item in items:
        item = " ".join(item.split())
        named = re.fullmatch(rf"(.*) AS ({_IDENT})", item, re.S)
        bare = re.fullmatch(rf"(?:{_IDENT}\.)?({_IDENT})", item)
        if named is not None:
            expressions[_unquote(named[2])] = named[1]
        elif bare is not None:
            expressions[_unquote(bare[1])] = item
    return RecordingsView(str(schema), str(name), table, alias, expressions)


def _depth(text: str, end: int) -> int:
    """How many parentheses (outside quotes) are open in ``text`` before ``end``; -1 when
    ``end`` is inside a literal or a quoted name."""
    *_, (_, _, depth) = _depths(text[:end] + " ")
    return -1 if depth is None else depth


def written_tables(conn: psycopg.Connection[Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """The tables the adapter's functions insert into or update (schema and name, unquoted),
    found through the catalog alone, and the names that could not be found so."""
    found: list[tuple[str, str]] = []
    unresolved: list[str] = []
    for _name, _language, body, search_path in conn.execute(query("adapter_functions"),
                                                            (adapter.SCHEMA,)):
        writes, _dynamic = statements(str(body))
        for s in writes:
            if s.verb not in ("insert", "update"):
                continue
            parts = [_unquote(p) for p in re.findall(_IDENT, s.relation)]
            schemas = parts[:1] if len(parts) == 2 else [
                p.strip().strip('"') for p in str(search_path).split(",")]
            place = next(((sch, parts[-1]) for sch in schemas if sch and conn.execute(
                query("relation_exists"), (sch, parts[-1])).fetchone() == (True,)), None)
            if place is None:
                unresolved.append(s.relation)
            elif place not in found and place[0] not in _OWN_SCHEMAS:
                found.append(place)
    return found, sorted(set(unresolved))


def is_identifier(text: str) -> bool:
    """Whether ``text`` is one column's name as PostgreSQL prints it."""
    return re.fullmatch(_IDENT, text) is not None
