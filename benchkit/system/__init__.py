"""What touches the operating system but measures nothing: child processes, files (results
files, traces, atomic writes) and the machine's fingerprint."""
