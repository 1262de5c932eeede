# Sourced by the bench scripts that read golmpi's --stats JSON.

# stats_fields FILE.json NAME...: the named fields on one line, separated by spaces. A golmpi from
# before the rates had distinct names (bench_cpu_vs_prev.sh runs one) wrote the whole-run rate
# as cell_updates_per_s.
stats_fields() {
  python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
old = {'whole_run_cell_updates_per_s': 'cell_updates_per_s'}
print(*(s[k] if k in s else s[old[k]] for k in sys.argv[2:]))" "$@"
}
