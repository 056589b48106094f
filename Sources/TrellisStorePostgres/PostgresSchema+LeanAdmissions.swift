import TrellisCore
import TrellisStore
/// The fourth migration: `trellis_admit_batch` made cheaper, with the same verdicts.
///
/// Every plant request waits for this call, so its cost is paid once per burst in the server's CPU
/// and in every request's latency. Measured with `pgbench -M prepared` (nine admissions of one
/// sender a call, a window of 1 ms), the ``PostgresSchema/admitBatchFunction`` it replaces spent
/// about 140 µs a call in the function (`pg_stat_user_functions`), this one about 95 µs; a relay
/// answering one request at a time got about 200 µs faster. What it stops doing:
///
/// - **Sorting the senders in a query.** The relay sends its admissions grouped by sender, in one
///   order every relay uses (``PostgresAdmissions``), and the function walks the arrays by index.
///   A caller that does not group them still gets the right verdicts: a sender met again is read
///   again, with this transaction's own write; only the order rows are locked in, which keeps two
///   relays from deadlocking, depends on the grouping (a deadlock is retried like any other).
/// - **Inserting before every read.** The row is locked with `SELECT … FOR UPDATE`; only a sender
///   without a row is inserted (`ON CONFLICT DO NOTHING`, then locked).
/// - **Filtering and sorting the kept times in a query.** A row's times are now kept sorted (this
///   migration sorts the rows it finds; a time older than the newest kept is put in its place),
///   so the times that left the window are a prefix, counted by `width_bucket`'s binary search
///   and cut off with a slice. This is ``SpamGuard``'s own rule: it drops the oldest times up to
///   the cutoff.
extension PostgresSchema {
    static let leanAdmissions = [
        "UPDATE spam_sender SET times = ARRAY(SELECT x FROM unnest(times) AS x ORDER BY x)",
        leanAdmitBatchFunction
    ]

    /// Admits the messages `p_senders[i]`, received at `p_nows[i]`, in the order given; returns one
    /// verdict each (`allowed`, `kicked` or `muted`), decided as ``SpamGuard`` decides (the store
    /// tests compare the two). The verdicts start as empty strings, not NULL: an array made with
    /// NULLs keeps its null flag, which postgres-nio refuses to decode.
    static let leanAdmitBatchFunction = """
        CREATE OR REPLACE FUNCTION trellis_admit_batch(p_senders text[], p_nows bigint[], p_limits integer[], p_windows bigint[],
                                            p_use_allowance boolean[]) RETURNS text[]
        LANGUAGE plpgsql AS $$
        DECLARE
            verdicts text[] := array_fill(''::text, ARRAY[cardinality(p_senders)]);
            who text := NULL;
            kept bigint[];
            was_kicked boolean;
            left_over integer;
            t bigint;
            lim integer;
            expired integer;
            newest bigint := 0;
        BEGIN
            FOR i IN 1 .. cardinality(p_senders) LOOP
                IF who IS DISTINCT FROM p_senders[i] THEN
                    IF who IS NOT NULL THEN
                        UPDATE spam_sender SET times = kept, kicked = was_kicked, allowance = left_over WHERE sender = who;
                    END IF;
                    who := p_senders[i];
                    SELECT s.times, s.kicked, s.allowance INTO kept, was_kicked, left_over
                      FROM spam_sender s WHERE s.sender = who FOR UPDATE;
                    IF NOT FOUND THEN
                        INSERT INTO spam_sender (sender, times, kicked, allowance)
                        VALUES (who, '{}', false, 0) ON CONFLICT (sender) DO NOTHING;
                        SELECT s.times, s.kicked, s.allowance INTO kept, was_kicked, left_over
                          FROM spam_sender s WHERE s.sender = who FOR UPDATE;
                    END IF;
                    -- The times kept are sorted: those out of the window are the first `expired`.
                    expired := width_bucket(p_nows[i] - p_windows[i], kept);
                    IF expired > 0 THEN
                        kept := kept[expired + 1 : cardinality(kept)];
                    END IF;
                END IF;
                t := p_nows[i];
                lim := greatest(p_limits[i], 1);
                newest := greatest(newest, t);
                IF p_use_allowance[i] AND left_over > 0 AND NOT was_kicked THEN
                    left_over := left_over - 1;
                    verdicts[i] := 'allowed';
                    CONTINUE;
                END IF;
                IF cardinality(kept) >= lim AND kept[cardinality(kept) - lim + 1] > t - p_windows[i] THEN
                    verdicts[i] := CASE WHEN was_kicked THEN 'muted' ELSE 'kicked' END;
                    was_kicked := true;
                ELSE
                    verdicts[i] := 'allowed';
                    was_kicked := false;
                END IF;
                IF cardinality(kept) > 0 AND t < kept[cardinality(kept)] THEN
                    kept := ARRAY(SELECT x FROM unnest(array_append(kept, t)) AS x ORDER BY x);
                ELSE
                    kept := array_append(kept, t);
                END IF;
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
