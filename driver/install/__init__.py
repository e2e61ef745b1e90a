"""Install tooling: migrate, the contract with the service, service-sql, uninstall."""
