package api

// fileRoutes are the /files routes of SPEC §7.2.
func (a *API) fileRoutes() []route {
	return nil
}
