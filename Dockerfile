# syntax=docker/dockerfile:1
#
# The steward worker (entrypoint) and starter, for docker-compose.yml.
# docker build -t steward .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -o /out/worker ./worker && go build -o /out/starter ./starter

# The process driver runs the spec's commands, often scripts that want a shell
# and the usual tools: a slim Debian rather than a shell-less distroless.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/worker /out/starter /usr/local/bin/
EXPOSE 9090
ENTRYPOINT ["worker"]
CMD ["--address", "temporal:7233", "--metrics", "0.0.0.0:9090"]
