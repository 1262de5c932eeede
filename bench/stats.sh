# Sourced by the bench scripts that read golmpi's --stats JSON.

# stats_fields FILE.json NAME...: the named fields on one line, separated by spaces
stats_fields() {
  python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print(*(s[k] for k in sys.argv[2:]))" "$@"
}
