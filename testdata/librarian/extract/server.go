package server

import (
	"fmt"
	"net/http"
)

// Handler serves one route.
type Handler interface {
	Serve(w http.ResponseWriter) error
}

type Server struct {
	addr string
}

type Port = int

// NewServer makes a server.
func NewServer(addr string) *Server {
	return &Server{addr: addr}
}

func (s *Server) Start() error {
	fmt.Println(s.addr)
	return http.ListenAndServe(s.addr, nil)
}
