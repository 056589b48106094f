import TrellisCore
import TrellisStore
/// The third migration: what lets a relay answer a burst of plant requests with one round trip.
///
/// - `spam_sender` becomes UNLOGGED. A spam window is worth seconds; like the SQLite store's, which
///   lives in memory, it is not worth a disk flush per message, and PostgreSQL empties an unlogged
///   table after a crash (its replicas do not have it), which only forgives the senders counted.
/// - `trellis_admit_batch` admits many messages in one call, in the order given (see
///   ``admitBatchFunction``). It replaces `trellis_admit`, which is dropped: one copy of the rule.
/// - `trellis_version` counts the committed changes of the plant tables: a statement trigger on
///   `plant`, `plant_sensor` and `sensor_reading` adds one in the changing transaction. A reader that
///   reads the count and the rows in one statement knows which changes its rows include; a relay
///   keeps an answer and gives it again while the count it last saw has not moved (see
///   ``PostgresReadCache``).
extension PostgresSchema {
    static let batching =
        [
            "ALTER TABLE spam_sender SET UNLOGGED",
            "DROP FUNCTION trellis_admit(text, bigint, integer, bigint, boolean)",
            admitBatchFunction,
            "CREATE TABLE trellis_version (name text COLLATE \"C\" PRIMARY KEY, version bigint NOT NULL)",
            "INSERT INTO trellis_version (name, version) VALUES ('plants', 0)",
            """
            CREATE FUNCTION trellis_plants_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE trellis_version SET version = version + 1 WHERE name = 'plants';
                RETURN NULL;
            END $$
            """
        ]
        + ["plant", "plant_sensor", "sensor_reading"].map { table in
            """
            CREATE TRIGGER \(table)_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(table)
            FOR EACH STATEMENT EXECUTE FUNCTION trellis_plants_changed()
            """
        }

    /// Admits the messages `p_senders[i]`, received at `p_nows[i]`, in the order given; returns one
    /// verdict each (`allowed`, `kicked` or `muted`), decided as ``SpamGuard`` decides (the store tests
    /// compare the two).
    ///
    /// Each sender's row is created if absent and locked once, in sender order (two relays admitting
    /// the same senders lock them in the same order, so they cannot deadlock), its messages decided
    /// in memory, and the row written once. The times kept are those still in the window when the
    /// sender's first message of the call came, oldest first, at most `limit`; a message is over the
    /// limit when `limit` times are kept and the oldest of them is still in its window. The verdicts
    /// start as empty strings, not NULL: an array made with NULLs keeps its null flag, which
    /// postgres-nio refuses to decode. Replaced by ``leanAdmitBatchFunction`` (``leanAdmissions``).
    static let admitBatchFunction = """
        CREATE FUNCTION trellis_admit_batch(p_senders text[], p_nows bigint[], p_limits integer[], p_windows bigint[],
                                            p_use_allowance boolean[]) RETURNS text[]
        LANGUAGE plpgsql AS $$
        DECLARE
            verdicts text[] := array_fill(''::text, ARRAY[cardinality(p_senders)]);
            item record;
            who text := NULL;
            kept bigint[];
            was_kicked boolean;
            left_over integer;
            t bigint;
            lim integer;
            newest bigint := 0;
        BEGIN
            FOR item IN SELECT u.s AS sender, u.i AS i FROM unnest(p_senders) WITH ORDINALITY AS u(s, i) ORDER BY u.s, u.i LOOP
                IF who IS DISTINCT FROM item.sender THEN
                    IF who IS NOT NULL THEN
                        UPDATE spam_sender SET times = kept, kicked = was_kicked, allowance = left_over WHERE sender = who;
                    END IF;
                    who := item.sender;
                    INSERT INTO spam_sender (sender, times, kicked, allowance)
                    VALUES (who, '{}', false, 0) ON CONFLICT (sender) DO NOTHING;
                    SELECT s.times, s.kicked, s.allowance INTO kept, was_kicked, left_over
                      FROM spam_sender s WHERE s.sender = who FOR UPDATE;
                    -- The times still in the window of the sender's first message here, oldest first.
                    kept := ARRAY(SELECT x FROM unnest(kept) AS x WHERE x > p_nows[item.i] - p_windows[item.i] ORDER BY x);
                END IF;
                t := p_nows[item.i];
                lim := greatest(p_limits[item.i], 1);
                newest := greatest(newest, t);
                IF p_use_allowance[item.i] AND left_over > 0 AND NOT was_kicked THEN
                    left_over := left_over - 1;
                    verdicts[item.i] := 'allowed';
                    CONTINUE;
                END IF;
                IF cardinality(kept) >= lim AND kept[cardinality(kept) - lim + 1] > t - p_windows[item.i] THEN
                    verdicts[item.i] := CASE WHEN was_kicked THEN 'muted' ELSE 'kicked' END;
                    was_kicked := true;
                ELSE
                    verdicts[item.i] := 'allowed';
                    was_kicked := false;
                END IF;
                kept := array_append(kept, t);
                IF cardinality(kept) > lim THEN
                    kept := kept[cardinality(kept) - lim + 1 : cardinality(kept)];
                END IF;
            END LOOP;
            IF who IS NOT NULL THEN
                UPDATE spam_sender SET times = kept, kicked = was_kicked, allowance = left_over WHERE sender = who;
            END IF;
            IF random() < 0.001 THEN
                DELETE FROM spam_sender
                WHERE sender <> ALL(p_senders) AND coalesce(times[cardinality(times)], 0) <= newest - p_windows[1];
            END IF;
            RETURN verdicts;
        END $$
        """
}
