"""The audit pipeline: a PySpark job over the controller's audit JSON lines (`fauxka report`).

    inputs.py   which files an --audit argument names (a file, a directory, a glob; gzip too)
    schema.py   the explicit schema of an audit line and Kafka's error names
    session.py  a SparkSession with settings for a small machine
    tables.py   parsing (malformed lines counted, never fatal) and the aggregate tables
    job.py      the whole run: tables to Parquet, summary.json, then the human report
    plots.py    matplotlib PNGs;  markdown.py  report.md, rendered from the Parquet tables
"""
