package cli

import (
	"io"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// listJSON is what `airnode list --json` prints: the plain listing's
// points with their extensions, and the configuration's plugins.
type listJSON struct {
	Points  []pointJSON  `json:"points"`
	Plugins []pluginJSON `json:"plugins"` // [] when the configuration declares none
}

// pointJSON is one extension point of list --json.
type pointJSON struct {
	Name       string          `json:"name"`
	Key        string          `json:"key"`     // URL key that selects it; "" when the URL's scheme does (registry)
	Default    string          `json:"default"` // "" for filter (the activated set)
	Extensions []extensionJSON `json:"extensions"`
}

// extensionJSON is one extension of a point in list --json.
type extensionJSON struct {
	Name       string          `json:"name"`
	Origin     string          `json:"origin"`  // "bundled", the plugin binary's path, or an in-process extension's Go package path
	Default    bool            `json:"default"` // the point's default
	Activation *activationJSON `json:"activation,omitempty"`
	Notes      string          `json:"notes"`             // the NOTES column, "" none
	WireID     *uint8          `json:"wire_id,omitempty"` // a codec's id in frames' flags (docs/wire.md)
}

// activationJSON says when a filter is switched on (spi.Activation).
type activationJSON struct {
	Sides []string `json:"sides"` // consumer, provider; [] only when listed in filter=
	Key   string   `json:"key"`   // a URL key that must be present, "" none
	Order int      `json:"order"`
}

// pluginJSON is one plugin of the configuration in list --json.
type pluginJSON struct {
	Name     string   `json:"name"`
	Point    string   `json:"point"`
	Binary   string   `json:"binary"`
	Protocol int      `json:"protocol"` // negotiated protocol version, 0 before the handshake
	Provides []string `json:"provides"` // NAME IN BINARY: names the binary gives, [] until it ran
	State    string   `json:"state"`    // running, failed, checked, not started, starting, restarting, stopped
	Reason   string   `json:"reason"`   // why failed, restarting, stopped, checked or not started; "" none
	PID      int      `json:"pid"`      // 0 when not running
	Restarts int      `json:"restarts"`
}

// printListJSON writes list --json: points (cat.Describe(), usablePoints)
// as printList lists them and plugins (their Reason as list shows it),
// one indented object.
func printListJSON(w io.Writer, cat *extension.Catalogs, points []extension.PointInfo, plugins []pluginhost.PluginInfo) error {
	out := listJSON{Points: []pointJSON{}, Plugins: []pluginJSON{}}
	for _, p := range points {
		pj := pointJSON{Name: p.Name, Key: p.Key, Default: p.Default, Extensions: []extensionJSON{}}
		for _, e := range p.Extensions {
			ej := extensionJSON{Name: e.Name, Origin: string(e.Origin), Default: p.Name != extension.PointFilter && e.Name == p.Default}
			ej.Notes = extensionNote(cat, p, e.Name)
			if p.Name == extension.PointCodec {
				if c, err := cat.Codec.Get(e.Name); err == nil {
					id := c.ID()
					ej.WireID = &id
				}
			}
			if p.Name == extension.PointFilter {
				ej.Activation = filterActivation(cat, e.Name)
			}
			pj.Extensions = append(pj.Extensions, ej)
		}
		out.Points = append(out.Points, pj)
	}
	for _, p := range plugins {
		provides := p.Provides
		if provides == nil {
			provides = []string{}
		}
		out.Plugins = append(out.Plugins, pluginJSON{Name: p.Name, Point: p.Point, Binary: p.Path, Protocol: p.ProtocolVersion,
			Provides: provides, State: string(p.State), Reason: p.Reason, PID: p.PID, Restarts: p.Restarts})
	}
	return jsonOutput(w).Encode(out)
}

// filterActivation returns filter name's activation, nil when it is not
// known (a plugin that never ran: activation's note says why).
func filterActivation(cat *extension.Catalogs, name string) *activationJSON {
	f, err := cat.Filter.Get(name)
	if err != nil {
		return nil
	}
	if _, ok := f.(interface{ NotRunning() string }); ok {
		return nil
	}
	a := f.Activation()
	sides := []string{}
	for _, s := range a.Sides {
		sides = append(sides, string(s))
	}
	return &activationJSON{Sides: sides, Key: a.Key, Order: a.Order}
}
