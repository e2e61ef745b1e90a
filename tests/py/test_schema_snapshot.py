"""sql/schema.sql, the reviewer's one-file view of the product's schema, is what a fresh migrate of
this tree produces (tools/schema_snapshot.py --check against the test stack's PostgreSQL), and
its renderer keeps every object a later migration may add, function bodies and comments aside."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, Stack

from tools import schema_snapshot


def test_sql_schema_sql_matches_a_fresh_migrate(stack: Stack) -> None:
    env = dict(os.environ, DATABASE_URL=stack.owner_url,
               RFR_STACK_PG_BIN=stack.env.get("RFR_STACK_PG_BIN", ""))
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "schema_snapshot.py"), "--check"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"sql/schema.sql differs from a fresh migrate (run `make schema`):\n"
        f"{proc.stdout[-4000:]}{proc.stderr[-2000:]}")
    assert "matches a fresh migrate" in proc.stdout


def _entry(name: str, kind: str, schema: str, body: str) -> str:
    return f"--\n-- Name: {name}; Type: {kind}; Schema: {schema}; Owner: -\n--\n\n{body}\n\n\n"


DUMP = "".join([
    "--\n-- PostgreSQL database dump\n--\n\n\\restrict abc\n\nSET lock_timeout = 0;\n\n",
    _entry("rf", "SCHEMA", "-", "CREATE SCHEMA rf;"),
    _entry("f(p integer)", "FUNCTION", "rf", "CREATE FUNCTION rf.f(p integer) RETURNS integer\n"
           "    AS $$select secret_body$$;"),
    _entry("a", "TABLE", "rf", "CREATE TABLE rf.a (\n    id bigint NOT NULL\n);"),
    _entry("b", "VIEW", "rf", "CREATE VIEW rf.b AS\n SELECT a.id FROM rf.a;"),
    _entry("TABLE a", "COMMENT", "rf", "COMMENT ON TABLE rf.a IS 'words';"),
    _entry("a a_pkey", "CONSTRAINT", "rf", "ALTER TABLE ONLY rf.a\n"
           "    ADD CONSTRAINT a_pkey PRIMARY KEY (id);"),
    _entry("a a_touch", "TRIGGER", "rf", "CREATE TRIGGER a_touch BEFORE UPDATE ON rf.a "
           "FOR EACH ROW EXECUTE FUNCTION rf.f();"),
    _entry("rf_pub", "PUBLICATION", "-", "CREATE PUBLICATION rf_pub;"),
    _entry("FUNCTION f(p integer)", "ACL", "rf", "REVOKE ALL ON FUNCTION rf.f(p integer) FROM "
           "PUBLIC;"),
    _entry("TABLE b", "ACL", "rf", "GRANT SELECT ON TABLE rf.b TO reader;"),
    "--\n-- PostgreSQL database dump complete\n--\n\n\\unrestrict abc\n",
])


def test_render_keeps_the_shape_and_leaves_out_bodies_and_comments() -> None:
    text = schema_snapshot.render(schema_snapshot.entries(DUMP), ["-- rf.f(p integer) -> x"])
    assert "secret_body" not in text and "COMMENT ON TABLE" not in text
    assert "REVOKE ALL ON FUNCTION" not in text  # a function's grants are on its own line
    assert "\\restrict" not in text and "SET lock_timeout" not in text
    assert "dump complete" not in text
    # Each table's parts follow it; an object kind the renderer does not know is kept.
    assert text.index("CREATE TABLE rf.a") < text.index("ADD CONSTRAINT a_pkey") \
        < text.index("CREATE TRIGGER a_touch") < text.index("CREATE VIEW rf.b") \
        < text.index("GRANT SELECT ON TABLE rf.b") < text.index("CREATE PUBLICATION rf_pub") \
        < text.index("-- rf.f(p integer) -> x")
    assert text.index("CREATE SCHEMA rf;") < text.index("CREATE TABLE rf.a")
