/**
 * What PostgreSQL keeps in the writer's transaction, as SQLite's triggers do (sqlite/schema.ts,
 * turn-usage.ts, experiment-summaries.ts): a session's latest turn status, each turn's usage
 * roll-up, each experiment's summary. Whoever writes (the store, an import, `db copy`, another
 * host's older build) keeps them right.
 */

const TURN_STATUS =
  "COALESCE(status, CASE WHEN completed_at IS NULL THEN 'running' ELSE 'completed' END)";

/** The usage roll-up's counts, and one call's contribution to each (usage-rollups.ts's sums). */
const COUNTS: ReadonlyArray<readonly [string, string]> = [
  ["prompt_tokens", "NEW.prompt_tokens"],
  ["completion_tokens", "NEW.completion_tokens"],
  ["total_tokens", "NEW.total_tokens"],
  ["cached_tokens", "NEW.cached_tokens"],
  ["elapsed_ms", "NEW.elapsed_ms"],
  ["call_count", "1"],
  ["fallback_count", "(NEW.call_kind = 'argument_fallback')::int"],
  ["tool_count", "(NEW.call_kind = 'tool_execution')::int"],
  ["estimated_count", "NEW.estimated"],
  ["reasoning_tokens", "NEW.reasoning_tokens"],
  ["cache_write_tokens", "NEW.cache_write_tokens"],
  ["reported_cost_count", "(NEW.cost_usd IS NOT NULL)::int"],
  [
    "unpriced_count",
    "(NEW.call_kind <> 'tool_execution' AND NEW.cost_usd IS NULL AND NEW.cost_estimated_usd IS NULL)::int",
  ],
];
const COUNT_NAMES = COUNTS.map(([name]) => name).join(", ");

/** The same sums over stored calls (the migration's rebuild), `NEW.` read from each row. */
const AGGREGATES = COUNTS.map(([name, value]) =>
  value === "1" ? `COUNT(*) AS ${name}` : `SUM(${value.replaceAll("NEW.", "")}) AS ${name}`,
).join(", ");

const experiment = {
  earliestTag: (id: string) =>
    `(SELECT (agent_lab_json(config_json)->'experiment')::text FROM sessions
      WHERE experiment_id = ${id} ORDER BY created_at, seq LIMIT 1)`,
  firstCreated: (id: string) =>
    `(SELECT created_at FROM sessions WHERE experiment_id = ${id} ORDER BY created_at LIMIT 1)`,
  lastCreated: (id: string) =>
    `(SELECT created_at FROM sessions WHERE experiment_id = ${id} ORDER BY created_at DESC LIMIT 1)`,
  lastUpdated: (id: string) =>
    `(SELECT updated_at FROM sessions WHERE experiment_id = ${id} ORDER BY updated_at DESC LIMIT 1)`,
};

export const TRIGGERS: readonly string[] = [
  `CREATE OR REPLACE FUNCTION agent_lab_last_status() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE sid text := CASE WHEN TG_OP = 'DELETE' THEN OLD.session_id ELSE NEW.session_id END;
  BEGIN
    UPDATE sessions SET last_status = (SELECT ${TURN_STATUS} FROM turns WHERE session_id = sid
      ORDER BY turn_index DESC LIMIT 1) WHERE id = sid;
    RETURN NULL;
  END $$`,
  `CREATE OR REPLACE TRIGGER turns_last_status AFTER INSERT OR DELETE OR UPDATE OF status, completed_at
    ON turns FOR EACH ROW EXECUTE FUNCTION agent_lab_last_status()`,
  `CREATE OR REPLACE FUNCTION agent_lab_turn_usage() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO turn_usage AS t (session_id, turn_index, ${COUNT_NAMES}, cost_usd)
    VALUES (NEW.session_id, NEW.turn_index, ${COUNTS.map(([, value]) => value).join(", ")},
      COALESCE(NEW.cost_usd, NEW.cost_estimated_usd))
    ON CONFLICT (session_id, turn_index) DO UPDATE SET
      ${COUNTS.map(([name]) => `${name} = t.${name} + EXCLUDED.${name}`).join(", ")},
      -- NULL until some call has a cost, as SUM over only NULLs is.
      cost_usd = CASE WHEN EXCLUDED.cost_usd IS NULL THEN t.cost_usd
        ELSE COALESCE(t.cost_usd, 0) + EXCLUDED.cost_usd END;
    RETURN NULL;
  END $$`,
  `CREATE OR REPLACE TRIGGER usage_stats_turn_usage AFTER INSERT ON usage_stats
    FOR EACH ROW EXECUTE FUNCTION agent_lab_turn_usage()`,
  // An experiment summed again from its sessions (a rare change of a session's tag or dates).
  `CREATE OR REPLACE FUNCTION agent_lab_refresh_experiment(eid text) RETURNS void
    LANGUAGE plpgsql AS $$
  BEGIN
    IF eid IS NULL THEN RETURN; END IF;
    UPDATE experiment_summaries SET sessions = 0, first_created_at = NULL, last_created_at = NULL,
      last_updated_at = NULL, tag_json = NULL, revision = revision + 1 WHERE id = eid;
    INSERT INTO experiment_summaries AS e
      (id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision)
    SELECT eid, count(*), min(created_at), max(created_at), max(updated_at),
      ${experiment.earliestTag("eid")}, 1
    FROM sessions WHERE experiment_id = eid GROUP BY experiment_id
    ON CONFLICT (id) DO UPDATE SET sessions = EXCLUDED.sessions,
      first_created_at = EXCLUDED.first_created_at, last_created_at = EXCLUDED.last_created_at,
      last_updated_at = EXCLUDED.last_updated_at, tag_json = EXCLUDED.tag_json,
      revision = e.revision + 1;
  END $$`,
  `CREATE OR REPLACE FUNCTION agent_lab_experiment_summary() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO experiment_summaries AS e
        (id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision)
      VALUES (NEW.experiment_id, 1, NEW.created_at, NEW.created_at, NEW.updated_at,
        (agent_lab_json(NEW.config_json)->'experiment')::text, 1)
      ON CONFLICT (id) DO UPDATE SET
        sessions = e.sessions + 1,
        revision = e.revision + 1,
        tag_json = CASE WHEN e.first_created_at IS NULL OR EXCLUDED.first_created_at < e.first_created_at
          THEN EXCLUDED.tag_json ELSE e.tag_json END,
        first_created_at = LEAST(e.first_created_at, EXCLUDED.first_created_at),
        last_created_at = GREATEST(e.last_created_at, EXCLUDED.last_created_at),
        last_updated_at = GREATEST(e.last_updated_at, EXCLUDED.last_updated_at);
    ELSIF TG_OP = 'DELETE' THEN
      -- A bound the session held is read again from the indexes, one probe each.
      UPDATE experiment_summaries SET
        sessions = sessions - 1,
        revision = revision + 1,
        tag_json = CASE WHEN OLD.created_at > first_created_at THEN tag_json
          ELSE ${experiment.earliestTag("OLD.experiment_id")} END,
        first_created_at = CASE WHEN OLD.created_at > first_created_at THEN first_created_at
          ELSE ${experiment.firstCreated("OLD.experiment_id")} END,
        last_created_at = CASE WHEN OLD.created_at < last_created_at THEN last_created_at
          ELSE ${experiment.lastCreated("OLD.experiment_id")} END,
        last_updated_at = CASE WHEN OLD.updated_at < last_updated_at THEN last_updated_at
          ELSE ${experiment.lastUpdated("OLD.experiment_id")} END
      WHERE id = OLD.experiment_id;
    ELSIF NEW.config_json IS DISTINCT FROM OLD.config_json
        OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
      PERFORM agent_lab_refresh_experiment(OLD.experiment_id);
      IF NEW.experiment_id IS DISTINCT FROM OLD.experiment_id THEN
        PERFORM agent_lab_refresh_experiment(NEW.experiment_id);
      END IF;
    ELSE
      -- The hot path: every write to a session moves its updated_at (a running turn's middle
      -- rounds excepted: its claim and its end do).
      UPDATE experiment_summaries SET
        revision = revision + 1,
        last_updated_at = CASE WHEN NEW.updated_at >= last_updated_at THEN NEW.updated_at
          WHEN OLD.updated_at < last_updated_at THEN last_updated_at
          ELSE ${experiment.lastUpdated("NEW.experiment_id")} END
      WHERE id = NEW.experiment_id;
    END IF;
    RETURN NULL;
  END $$`,
  `CREATE OR REPLACE TRIGGER sessions_experiment_insert AFTER INSERT ON sessions FOR EACH ROW
    WHEN (NEW.experiment_id IS NOT NULL) EXECUTE FUNCTION agent_lab_experiment_summary()`,
  `CREATE OR REPLACE TRIGGER sessions_experiment_delete AFTER DELETE ON sessions FOR EACH ROW
    WHEN (OLD.experiment_id IS NOT NULL) EXECUTE FUNCTION agent_lab_experiment_summary()`,
  `CREATE OR REPLACE TRIGGER sessions_experiment_update
    AFTER UPDATE OF updated_at, config_json, created_at ON sessions FOR EACH ROW
    WHEN (NEW.experiment_id IS NOT NULL OR OLD.experiment_id IS NOT NULL)
    EXECUTE FUNCTION agent_lab_experiment_summary()`,
];

/** Fills the derived tables from the rows themselves (a database written without them). */
export const REBUILD: readonly string[] = [
  `UPDATE sessions SET last_status = (SELECT ${TURN_STATUS} FROM turns
    WHERE turns.session_id = sessions.id ORDER BY turn_index DESC LIMIT 1),
    turn_count = (SELECT COUNT(*) FROM turns WHERE turns.session_id = sessions.id)`,
  "DELETE FROM turn_usage",
  `INSERT INTO turn_usage (session_id, turn_index, ${COUNT_NAMES}, cost_usd)
    SELECT session_id, turn_index, ${AGGREGATES}, SUM(COALESCE(cost_usd, cost_estimated_usd))
    FROM usage_stats GROUP BY session_id, turn_index`,
  "DELETE FROM experiment_summaries",
  `INSERT INTO experiment_summaries
    (id, sessions, first_created_at, last_created_at, last_updated_at, tag_json, revision)
    SELECT experiment_id, count(*), min(created_at), max(created_at), max(updated_at),
      ${experiment.earliestTag("outer_sessions.experiment_id")}, 1
    FROM sessions AS outer_sessions WHERE experiment_id IS NOT NULL GROUP BY experiment_id`,
];
