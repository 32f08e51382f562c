package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
)

// yamlParser is koanf's YAML parser (the same go.yaml.in/yaml/v3 decoding)
// with a truthful line in its syntax errors (see yamlLine) and URL keys'
// values kept as written (see keepText).
type yamlParser struct{}

// Unmarshal parses b as a YAML mapping. A top level that is not a
// mapping (a TOML or properties file reads as a string, an INI one as a
// list) is refused, naming what it is (notMapping); an empty file, or
// one that is only "~", is an empty mapping. A file of more than one YAML
// document is refused, naming the line of the second document's "---":
// yaml.v3 reads the first document only, so the keys after a stray "---"
// (files concatenated, a Kubernetes habit) were silently dropped, a
// misspelt one included.
func (yamlParser) Unmarshal(b []byte) (map[string]any, error) {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(b, &doc); err != nil {
		return nil, yamlLine(b, err)
	}
	// the top level first: a TOML or INI file may read as several
	// documents, none of them a mapping, and no "---" to remove
	empty := len(doc.Content) == 0 // an empty file, or comments only
	if !empty {
		top := doc.Content[0]
		empty = top.Kind == yaml3.ScalarNode && top.Tag == "!!null" // "~" or "null"
		if !empty && top.Kind != yaml3.MappingNode {
			return nil, notMapping(b, top)
		}
	}
	if line := secondDocument(b); line > 0 {
		return nil, fmt.Errorf("yaml: line %d: a second YAML document (\"---\"): the file must be one document, a single mapping; remove the \"---\" and merge the keys into one mapping", line)
	}
	var out map[string]any
	if empty {
		return out, nil
	}
	keepText(doc.Content[0])
	if err := doc.Decode(&out); err != nil {
		return nil, yamlLine(b, err)
	}
	return out, nil
}

// notMapping is Unmarshal's error for a file whose top level, top, is
// not a mapping, in yamlLine's form, naming what YAML read instead:
// `yaml: line 1: the top level is a string, not a mapping of keys
// (key: value lines) (line 1 is "listen = \":20880\"")`. A TOML or
// properties file reads as a string or a list; yaml.v3's own words were
// "cannot unmarshal !!str `listen=...` into map[string]interface {}".
func notMapping(b []byte, top *yaml3.Node) error {
	what := "a list"
	switch {
	case top.Kind == yaml3.ScalarNode && (top.Tag == "!!int" || top.Tag == "!!float"):
		what = "a number"
	case top.Kind == yaml3.ScalarNode && top.Tag == "!!bool":
		what = "true or false"
	case top.Kind == yaml3.ScalarNode:
		what = "a string"
	case top.Kind == yaml3.AliasNode:
		what = "an alias"
	}
	n := max(top.Line, 1)
	line := ""
	if lines := strings.SplitAfter(string(b), "\n"); n <= len(lines) {
		line = fmt.Sprintf(" (line %d is %q)", n, strings.TrimRight(lines[n-1], "\r\n"))
	}
	return fmt.Errorf("yaml: line %d: the top level is %s, not a mapping of keys (key: value lines)%s", n, what, line)
}

// secondDocument returns the 1-based line where the second YAML document
// of b starts (its "---" when it has one), or 0 when b holds one
// document or none. A leading "---" before the first document, or a
// document-end marker "..." followed by nothing, is one document.
func secondDocument(b []byte) int {
	dec := yaml3.NewDecoder(bytes.NewReader(b))
	var first, second yaml3.Node
	if err := dec.Decode(&first); err != nil {
		return 0
	}
	if err := dec.Decode(&second); err != nil {
		if errors.Is(err, io.EOF) {
			return 0
		}
		// a syntax error in a later document: it exists all the same
	}
	// The node's line is its content's; the "---" before it is the last
	// one at or above that line, after the first document's start.
	lines := strings.SplitAfter(string(b), "\n")
	start := first.Line
	if len(first.Content) > 0 {
		start = first.Content[0].Line
	}
	end := second.Line
	if end <= 0 || end > len(lines) {
		end = len(lines)
	}
	for n := end; n > start; n-- {
		if l := lines[n-1]; strings.HasPrefix(l, "---") && (len(l) == 3 || strings.ContainsRune(" \t\r\n", rune(l[3]))) {
			return n
		}
	}
	return max(end, 1)
}

// keepText makes the plain scalars that YAML would read as a number or a
// bool into strings with their text as written, where plugins.yaml holds
// strings that become URL parameters: protocol, services[i].params,
// references[i].params and plugins[i].env (keys and values). YAML reads
// "version: 1.0" as the float 1, which prints "1": the service was
// exported as demo.Echo:1 and consumers of :1.0 found nothing; likewise
// 010 (8 in YAML 1.1 readers, 10 here) and 1e3. Spring Boot and Dubbo
// bind such a value to a String property as written, and so does this.
// A null (an empty value, ~) stays null.
func keepText(root *yaml3.Node) {
	if root.Kind != yaml3.MappingNode {
		return
	}
	text := func(m *yaml3.Node) {
		if m == nil || m.Kind != yaml3.MappingNode {
			return
		}
		for _, n := range m.Content {
			if n.Kind == yaml3.ScalarNode && n.Style == 0 && (n.Tag == "!!int" || n.Tag == "!!float" || n.Tag == "!!bool") {
				n.Tag = "!!str"
			}
		}
	}
	text(mapValue(root, "protocol"))
	for list, key := range map[string]string{"services": "params", "references": "params", "plugins": "env"} {
		if seq := mapValue(root, list); seq != nil && seq.Kind == yaml3.SequenceNode {
			for _, item := range seq.Content {
				if item.Kind == yaml3.MappingNode {
					text(mapValue(item, key))
				}
			}
		}
	}
}

// mapValue returns the value node of key in mapping m, or nil.
func mapValue(m *yaml3.Node, key string) *yaml3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml3.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Marshal encodes o as YAML (koanf.Parser; Load does not use it).
func (yamlParser) Marshal(o map[string]any) ([]byte, error) { return yaml3.Marshal(o) }

// yamlErrLine matches a yaml.v3 syntax error: "yaml: line N: problem",
// or "yaml: problem" for a problem on the first line (yaml.v3 leaves out
// line 0: a leading tab, "@key").
var yamlErrLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlLine rewrites a YAML syntax error of b to name the line the parser
// stopped at, with that line's text:
// `yaml: line 3: did not find expected key (line 3 is " wait: 1s")`.
//
// yaml.v3 reports the 0-based line where the enclosing block began (its
// context mark) when there is one, so an indentation mistake on line 3 of
// a mapping that starts on line 2 reads "line 1". The problem mark it does
// not expose is found instead as the shortest run of leading lines that
// fails with the same error (problem and reported line): lines before the
// mistake parse, or fail otherwise (a flow collection cut short). Errors
// of another shape (type errors) are returned unchanged. A problem on
// the first line, which yaml.v3 reports with no line at all, is named
// "line 1" the same way.
func yamlLine(b []byte, err error) error {
	m := yamlErrLine.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	problem := m[2]
	lines := strings.SplitAfter(string(b), "\n")
	for n := 1; n <= len(lines); n++ {
		var out map[string]any
		perr := yaml3.Unmarshal([]byte(strings.Join(lines[:n], "")), &out)
		if pm := yamlErrLine.FindStringSubmatch(errString(perr)); pm != nil && pm[1] == m[1] && pm[2] == problem {
			return fmt.Errorf("yaml: line %d: %s (line %d is %q)", n, problem, n, strings.TrimRight(lines[n-1], "\r\n"))
		}
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nestedProblems finds maps written where plugins.yaml wants flat URL
// keys (protocol, services[i].params, references[i].params) or variables
// (plugins[i].env): `protocol:
// {heartbeat: {interval: 60s}}` gets `want a value, got a map: write the
// URL key flat, "heartbeat.interval: 60s"`. Nesting is not flattened
// into dotted keys: "heartbeat" is itself a key (the heartbeat extension)
// beside "heartbeat.interval", and one spelling per key keeps a file
// equal to the URL it becomes. raw is koanf's unflattened map.
func nestedProblems(raw map[string]any) []problem {
	var out []problem
	check := func(path, what string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sub, ok := m[k].(map[string]any)
			if !ok {
				continue
			}
			var flat []string
			flatten(k, sub, &flat)
			out = append(out, problem{path + "." + k, "want a value, got a map: write the " + what + " flat, " + strings.Join(flat, ", ")})
		}
	}
	check("protocol", "URL key", raw["protocol"])
	for _, list := range []string{"services", "references", "plugins"} {
		items, _ := raw[list].([]any)
		for i, it := range items {
			m, ok := it.(map[string]any)
			switch {
			case !ok:
			case list == "plugins":
				check(fmt.Sprintf("plugins[%d].env", i), "variable", m["env"])
			default:
				check(fmt.Sprintf("%s[%d].params", list, i), "URL key", m["params"])
			}
		}
	}
	return out
}

// flatten appends `"prefix.k: v"` for every leaf of m, in key order.
func flatten(prefix string, m map[string]any, out *[]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if sub, ok := m[k].(map[string]any); ok {
			flatten(prefix+"."+k, sub, out)
			continue
		}
		*out = append(*out, fmt.Sprintf("%q", fmt.Sprintf("%s.%s: %v", prefix, k, m[k])))
	}
}

// listExamples are the forms of plugins.yaml's lists, for listProblems.
var listExamples = map[string]string{
	"services":   "services: [{interface: demo.Echo, params: {weight: \"200\"}}]",
	"references": "references: [{interface: demo.Echo, params: {loadbalance: roundrobin}}]",
	"plugins":    "plugins: [{name: acme.p2c, point: loadbalance, command: ./bin/p2c}]",
}

// listProblems finds services, references and plugins written as
// something other than a list of entries, and entries that are not
// mappings, in raw (koanf's unflattened map): `services: demo.Echo` gets
// `services must be a list of entries, e.g. services: [{interface:
// demo.Echo, ...}], or one "- interface: ..." block per entry; got the
// string "demo.Echo"` instead of the decoder's "source data must be an
// array or slice". A list left empty (`services:`, null) passes.
func listProblems(raw map[string]any) []problem {
	var out []problem
	for _, list := range slices.Sorted(maps.Keys(listExamples)) {
		v, set := raw[list]
		if !set || v == nil {
			continue
		}
		items, ok := v.([]any)
		if !ok {
			out = append(out, problem{list, fmt.Sprintf("%s must be a list of entries, e.g. %s, or one \"- %s\" block per entry; got %s", list, listExamples[list], firstKey(list), describe(v))})
			continue
		}
		for i, it := range items {
			if _, ok := it.(map[string]any); !ok && it != nil {
				out = append(out, problem{fmt.Sprintf("%s[%d]", list, i), fmt.Sprintf("each entry of %s is a mapping, e.g. %s; got %s", list, strings.Trim(strings.TrimPrefix(listExamples[list], list+": "), "[]"), describe(it))})
			}
		}
	}
	return out
}

// firstKey returns the first line of an entry of list, for messages.
func firstKey(list string) string {
	if list == "plugins" {
		return "name: acme.p2c"
	}
	return "interface: demo.Echo"
}

// describe names v, a raw YAML value, for messages: `the string "x"`,
// `a mapping`, `the value 3`.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case map[string]any:
		return "a mapping (write it as a list: put \"- \" before its first key)"
	default:
		return fmt.Sprintf("the value %v", v)
	}
}

// pluginValueProblems finds two slips in plugins[i] of raw (koanf's
// unflattened map) that the decoder reports in its own words: args written
// as one string (`args: "--x 1"`, which gave "source data must be an array
// or slice, got string") gets `args is a list, one argument per item:
// args: ["--x", "1"]`; a sha256 YAML read as a number (an unquoted digest
// of digits only, which a float then shortened: the start failed with a
// "sha256 mismatch" against 1234567890123456800000...) gets `quote the
// digest`.
func pluginValueProblems(raw map[string]any) []problem {
	var out []problem
	items, _ := raw["plugins"].([]any)
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if s, ok := m["args"].(string); ok {
			q := make([]string, 0, 2)
			for _, f := range strings.Fields(s) {
				q = append(q, strconv.Quote(f))
			}
			out = append(out, problem{fmt.Sprintf("plugins[%d].args", i), fmt.Sprintf(
				"args is a list, one argument per item: args: [%s] (or one \"- ARG\" line per argument); got the string %q", strings.Join(q, ", "), s)})
		}
		switch v := m["sha256"].(type) {
		case int, int64, uint64, float64:
			out = append(out, problem{fmt.Sprintf("plugins[%d].sha256", i), fmt.Sprintf(
				"want the digest as a string, got the number %v: YAML reads an unquoted digest of digits only as a number, "+
					"which loses digits; quote it: sha256: \"<its 64 hexadecimal digits>\"", v)})
		}
	}
	return out
}
