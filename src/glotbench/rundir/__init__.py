"""The run directory, with one owner: its typed records (run.json, results.json, samples.jsonl lines:
`rundir.schema`), how they are written (atomic writes, the sample sink, the directory's name) and
read back, the finished-run rule (`rundir.files`), and the rules readers apply to a run's results:
which items it scored (`rundir.selection`) and whether its numbers are valid (`rundir.validity`).

Everything that writes or reads these files goes through here: the runner (engine/evaluate.py), the
judged phases, reports, compare, the board, the results store, sweeps, the service and the build
tools. Nothing here imports the engine, a benchmark or a report.
"""

from glotbench.rundir.files import (OLD_SUMMARIES, RESULTS, RUN_JSON, SAMPLES, SampleSink, finished_run, invalid_run,
                                    json_bytes, judged_section,
                                    new_run_dir, read_results, read_run_json, read_samples, run_status, sample_outputs,
                                    sample_rows, set_aside_invalid, slug, task_file_of, to_json, write_json_atomic,
                                    write_jsonl_atomic, keep_task_file, file_record, add_moved, relocated)

__all__ = ["OLD_SUMMARIES", "RESULTS", "RUN_JSON", "SAMPLES", "SampleSink", "finished_run", "invalid_run", "json_bytes",
           "judged_section",
           "new_run_dir", "read_results", "read_run_json", "read_samples", "run_status", "sample_outputs",
           "sample_rows", "set_aside_invalid", "slug", "task_file_of", "to_json", "write_json_atomic", "write_jsonl_atomic",
           "keep_task_file", "file_record", "add_moved", "relocated"]
