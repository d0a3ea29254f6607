package api

// webhookRoutes are the /webhooks and /webhook_deliveries routes of SPEC §7.2.
func (a *API) webhookRoutes() []route {
	return nil
}
