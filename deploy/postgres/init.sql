-- Keycloak keeps its realms in a database of its own on the same PostgreSQL (deploy/compose.yaml).
CREATE DATABASE keycloak OWNER imaging;
