import type { Migration } from './migration.js';

/**
 * Corpus statistics for BM25 keyword ranking (src/search/keyword-sql.ts), kept in step with
 * knowledge_segments by statement-level triggers, so every write path (indexing, re-indexing a
 * page, trimming a shorter page, a document deleted with its segments by cascade) updates them
 * in the transaction that changed the segments:
 * - knowledge_terms: per lexeme, the number of segments whose search vector holds it (the
 *   document frequency behind IDF);
 * - knowledge_segment_totals: per text search configuration, the number of segments and
 *   their summed token counts (N and the average length behind length normalisation; the
 *   dominant language of the index for short queries).
 * Lock order, so that concurrent writers cannot deadlock: a trigger updates the totals rows
 * first (languages in order), then the terms (lexemes in order). A writer therefore holds its
 * totals rows before any term row, and writers of one language take turns.
 */
export const keywordStatistics: Migration = {
  id: 11,
  name: 'keyword-statistics',
  statements: [
    `create table knowledge_terms (
       lexeme text primary key,
       segments integer not null
     )`,
    `create table knowledge_segment_totals (
       language text primary key,
       segments bigint not null,
       tokens bigint not null
     )`,
    // A lexeme as a one-term tsquery (quoted, so any characters a parser kept stay one lexeme).
    `create function knowledge_quote_lexeme(lexeme text) returns text
     language sql immutable strict parallel safe as $$
       select chr(39) || replace(replace(lexeme, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39)) || chr(39)
     $$`,
    `create type knowledge_segment_change as (
       language text, sign integer, token_count integer, search_vector tsvector
     )`,
    `create function knowledge_statistics_apply(changes knowledge_segment_change[]) returns void
     language sql as $$
       insert into knowledge_segment_totals as t (language, segments, tokens)
         select c.language, sum(c.sign), sum(c.sign * c.token_count)
         from unnest(changes) as c
         group by c.language
         having sum(c.sign) <> 0 or sum(c.sign * c.token_count) <> 0
         order by c.language
       on conflict (language) do update
         set segments = t.segments + excluded.segments, tokens = t.tokens + excluded.tokens;
       insert into knowledge_terms as t (lexeme, segments)
         select lexeme, sum(c.sign)
         from unnest(changes) as c, unnest(tsvector_to_array(c.search_vector)) as lexeme
         group by lexeme
         having sum(c.sign) <> 0
         order by lexeme
       on conflict (lexeme) do update set segments = t.segments + excluded.segments;
     $$`,
    // One function for the three triggers. A transition table exists only for the events of
    // its trigger, so each event reads its own (old_rows and/or new_rows).
    `create function knowledge_segments_statistics() returns trigger
     language plpgsql as $$
     begin
       if tg_op = 'INSERT' then
         perform knowledge_statistics_apply(array(
           select row(language, 1, token_count, search_vector)::knowledge_segment_change from new_rows));
       elsif tg_op = 'DELETE' then
         perform knowledge_statistics_apply(array(
           select row(language, -1, token_count, search_vector)::knowledge_segment_change from old_rows));
       else
         perform knowledge_statistics_apply(array(
           select row(language, 1, token_count, search_vector)::knowledge_segment_change from new_rows
           union all
           select row(language, -1, token_count, search_vector)::knowledge_segment_change from old_rows));
       end if;
       return null;
     end $$`,
    `create trigger knowledge_segments_statistics_insert after insert on knowledge_segments
       referencing new table as new_rows
       for each statement execute function knowledge_segments_statistics()`,
    `create trigger knowledge_segments_statistics_update after update on knowledge_segments
       referencing old table as old_rows new table as new_rows
       for each statement execute function knowledge_segments_statistics()`,
    `create trigger knowledge_segments_statistics_delete after delete on knowledge_segments
       referencing old table as old_rows
       for each statement execute function knowledge_segments_statistics()`,
    // Segments indexed before this migration.
    `insert into knowledge_segment_totals (language, segments, tokens)
       select language, count(*), coalesce(sum(token_count), 0) from knowledge_segments group by language`,
    `insert into knowledge_terms (lexeme, segments)
       select lexeme, count(*) from knowledge_segments, unnest(tsvector_to_array(search_vector)) as lexeme
       group by lexeme`,
  ],
};
