package main

import (
	"encoding/base64"
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// templateURI is the resource template the suite reads and completes.
const templateURI = "test://template/{id}/data"

// one returns a single content; the SDK fills in the URI and MIME type.
func one(rc kadu.ResourceContents) func(*kadu.Call) ([]kadu.ResourceContents, error) {
	return func(*kadu.Call) ([]kadu.ResourceContents, error) { return []kadu.ResourceContents{rc}, nil }
}

// resources are the suite's fixed resources and its template.
func resources() []kadu.Feature {
	png, err := base64.StdEncoding.DecodeString(pngBase64)
	if err != nil {
		panic(err) // a constant: caught by the tests
	}
	return []kadu.Feature{
		kadu.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
			Description: "A static text resource for testing", MIMEType: "text/plain", Access: anyReader,
			Read: one(kadu.ResourceContents{Text: "This is the content of the static text resource."})},
		kadu.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
			Description: "A static binary resource (image) for testing", MIMEType: "image/png", Access: anyReader,
			Read: one(kadu.ResourceContents{Blob: png})},
		kadu.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource",
			Description: "A resource clients may want to watch (Kadu has no subscriptions)", MIMEType: "text/plain", Access: anyReader,
			Read: one(kadu.ResourceContents{Text: "Watched resource content"})},
		kadu.ResourceTemplate{URITemplate: templateURI, Name: "template", Title: "Resource Template",
			Description: "A resource template with parameter substitution", MIMEType: "application/json", Access: anyReader,
			Read: func(_ *kadu.Call, _ string, vars map[string]string) ([]kadu.ResourceContents, error) {
				id := vars["id"]
				b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
				if err != nil {
					return nil, err
				}
				return []kadu.ResourceContents{{Text: string(b)}}, nil
			}},
	}
}
