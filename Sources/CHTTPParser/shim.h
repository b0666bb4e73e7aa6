#ifndef CHTTPPARSER_SHIM_H
#define CHTTPPARSER_SHIM_H
// Debian's libhttp-parser-dev (nodejs/http-parser 2.9): see AdLoaderAdmin/HTTPRequestParser.swift
// for why this parser. It has no pkg-config file; the header is /usr/include/http_parser.h.
#include <http_parser.h>

// Bit fields of http_parser, read through functions so that Swift does not depend on how the
// importer lays them out.
static inline unsigned int CHTTPParser_errno(const http_parser *parser) { return parser->http_errno; }
static inline unsigned int CHTTPParser_method(const http_parser *parser) { return parser->method; }
static inline unsigned int CHTTPParser_flags(const http_parser *parser) { return parser->flags; }
static inline int CHTTPParser_isChunked(const http_parser *parser) { return (parser->flags & F_CHUNKED) != 0; }
#endif
