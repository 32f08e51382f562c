package config

// EnvNames returns the environment variables Load reads (EnvPrefix and a
// setting's name: AIRNODE_LISTEN, AIRNODE_REGISTRY, ...), in the order of
// the settings, so that a command can tell a variable Load ignores, a
// typo such as AIRNODE_REGISTY, from one it reads. A new slice each call.
func EnvNames() []string {
	names := make([]string, 0, len(scalars))
	for _, s := range scalars {
		names = append(names, s.env)
	}
	return names
}
