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

# steps_for SIZE: the generations for SIZE, one of SIZES: its place there in the list STEPS (the
# last of STEPS again for the sizes past its end).
steps_for() {
  local sizes list i
  read -r -a sizes <<<"$SIZES"
  read -r -a list <<<"$STEPS"
  for i in "${!sizes[@]}"; do [[ ${sizes[i]} == "$1" ]] && break; done
  echo "${list[i]:-${list[-1]}}"
}
