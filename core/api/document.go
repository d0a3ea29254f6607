package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api/openapi"
)

// DocumentPath is where RegisterDocument serves the OpenAPI document.
const DocumentPath = openapi.Path

// RegisterDocument mounts GET /api/v1/openapi.json on e: the OpenAPI 3.1
// document of the routes Register mounts (core/api/openapi, generated from
// the same route table). It is public — it describes the API, not an
// organisation's data, and a client needs it before it has a token — so it
// is mounted on e beside the /api/v1 group, outside its authentication,
// with the group's request id, access log and error rendering.
func (a *API) RegisterDocument(e *echo.Echo) {
	doc := openapi.Document()
	e.GET(DocumentPath, func(c echo.Context) error {
		// The document changes only with the binary: caches may keep it,
		// and revalidate.
		c.Response().Header().Set("Cache-Control", "no-cache")
		return c.JSONBlob(http.StatusOK, doc)
	}, RequestID(), AccessLog(a.log), Errors(a.log))
}
