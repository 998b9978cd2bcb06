// A real Iceberg REST catalog for viewsync's tests: the JDK HTTP server routes the
// REST paths to Iceberg's own CatalogHandlers over an InMemoryCatalog, and every
// body is read and written with Iceberg's own RESTObjectMapper (RESTSerializers).
// It lives in org.apache.iceberg.rest only because RESTObjectMapper is package-private.
//
// Iceberg 1.5.2 predates list paging and the /v1/config "endpoints" list, so those two
// are added here (as Iceberg 1.7+ serves them). Test hooks, outside the REST spec:
//   -Dviewsync.maxPageSize=N   caps pageSize of list views/tables (default 100)
//   -Dviewsync.token=T         require "Authorization: Bearer T"
//   -Dviewsync.client=ID:SECRET  POST /v1/oauth/tokens (client_credentials) issues T
//   -Dviewsync.prefix=P        serve under /v1/P/... and announce the prefix in /v1/config
//   POST /admin/fail?status=409&phase=before|after&count=1  fail the next view writes
//                              (create or commit), before or after really writing
//   GET  /admin/fail           how many injected failures are still pending
//   GET  /admin/health
package org.apache.iceberg.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ListTablesResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;

public class IcebergRestServer {
  private static final ObjectMapper MAPPER = RESTObjectMapper.mapper();
  private static final String[] ENDPOINTS = {
    "GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables", "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/tables/rename",
    "GET /v1/{prefix}/namespaces/{namespace}/views", "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
  };

  private final InMemoryCatalog catalog = new InMemoryCatalog();
  private final int maxPageSize = Integer.getInteger("viewsync.maxPageSize", 100);
  private final String token = System.getProperty("viewsync.token", "");
  private final String client = System.getProperty("viewsync.client", "");
  private final String prefix = System.getProperty("viewsync.prefix", "");
  // injected failures for the next view commits: status, phase ("before"/"after"), count
  private volatile int failStatus = 0;
  private volatile boolean failAfter = false;
  private final AtomicInteger failCount = new AtomicInteger();

  /** An HTTP status with an Iceberg error body. */
  private static final class HttpError extends RuntimeException {
    final int status;
    final String type;

    HttpError(int status, String type, String message) {
      super(message);
      this.status = status;
      this.type = type;
    }
  }

  private IcebergRestServer(String warehouse) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    catalog.initialize("viewsync-test", props);
  }

  public static void main(String[] args) throws IOException {
    int port = Integer.parseInt(args[0]);
    String warehouse = args.length > 1 ? args[1] : "file:///tmp/viewsync-iceberg-warehouse";
    IcebergRestServer server = new IcebergRestServer(warehouse);
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    http.createContext("/", server::handle);
    http.setExecutor(Executors.newFixedThreadPool(16));
    http.start();
    System.out.println("iceberg-rest listening on " + port);
    System.out.flush();
  }

  private void handle(HttpExchange ex) throws IOException {
    try {
      Object result = route(ex);
      if (ex.getRequestMethod().equals("HEAD") || result == null) {
        ex.sendResponseHeaders(204, -1);
      } else {
        byte[] body = (result instanceof String ? (String) result : MAPPER.writeValueAsString(result))
            .getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      }
    } catch (Exception e) {
      sendError(ex, e);
    } finally {
      ex.close();
    }
  }

  private static void sendError(HttpExchange ex, Exception e) throws IOException {
    int status = statusOf(e);
    String type = e instanceof HttpError ? ((HttpError) e).type : e.getClass().getSimpleName();
    ErrorResponse error = ErrorResponse.builder()
        .responseCode(status).withType(type).withMessage(String.valueOf(e.getMessage())).build();
    if (status >= 500 && !(e instanceof HttpError)) {
      e.printStackTrace();
    }
    if (ex.getRequestMethod().equals("HEAD")) {
      ex.sendResponseHeaders(status, -1);
      return;
    }
    byte[] body = MAPPER.writeValueAsString(error).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  // The same mapping as Iceberg's RESTCatalogAdapter.
  private static int statusOf(Exception e) {
    if (e instanceof HttpError) {
      return ((HttpError) e).status;
    }
    if (e instanceof NoSuchNamespaceException || e instanceof NoSuchTableException
        || e instanceof NoSuchViewException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409;
    }
    if (e instanceof NotAuthorizedException) {
      return 401;
    }
    if (e instanceof ForbiddenException) {
      return 403;
    }
    if (e instanceof IllegalArgumentException || e instanceof ValidationException
        || e instanceof BadRequestException || e instanceof com.fasterxml.jackson.core.JsonProcessingException) {
      return 400;
    }
    if (e instanceof UnsupportedOperationException) {
      return 406;
    }
    if (e instanceof CommitStateUnknownException) {
      return 500;
    }
    return 500;
  }

  private Object route(HttpExchange ex) throws IOException {
    String method = ex.getRequestMethod();
    String rawPath = ex.getRequestURI().getRawPath();
    Map<String, String> query = query(ex.getRequestURI().getRawQuery());
    List<String> parts = new ArrayList<>(Arrays.asList(rawPath.replaceAll("^/+|/+$", "").split("/")));

    if (parts.size() >= 2 && parts.get(0).equals("admin")) {
      return admin(method, parts.get(1), query);
    }
    if (parts.isEmpty() || !parts.get(0).equals("v1")) {
      throw new HttpError(404, "NotFoundException", "no route for " + method + " " + rawPath);
    }
    parts.remove(0);
    if (parts.equals(List.of("oauth", "tokens")) && method.equals("POST")) {
      return oauthToken(readBody(ex));
    }
    authorize(ex);
    if (parts.equals(List.of("config")) && method.equals("GET")) {
      return config();
    }
    if (!prefix.isEmpty()) {
      if (parts.isEmpty() || !RESTUtil.decodeString(parts.get(0)).equals(prefix)) {
        throw new HttpError(404, "NotFoundException", "unknown prefix in " + rawPath);
      }
      parts.remove(0);
    }
    int n = parts.size();
    String p0 = n > 0 ? parts.get(0) : "";

    if (n == 2 && p0.equals("tables") && parts.get(1).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameTable(catalog, read(ex, RenameTableRequest.class));
      return null;
    }
    if (n == 2 && p0.equals("views") && parts.get(1).equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameView(catalog, read(ex, RenameTableRequest.class));
      return null;
    }
    if (!p0.equals("namespaces")) {
      throw new HttpError(404, "NotFoundException", "no route for " + method + " " + rawPath);
    }
    if (n == 1) {
      if (method.equals("GET")) {
        Namespace parent = query.containsKey("parent")
            ? RESTUtil.decodeNamespace(query.get("parent")) : Namespace.empty();
        return CatalogHandlers.listNamespaces(catalog, parent);
      }
      if (method.equals("POST")) {
        return CatalogHandlers.createNamespace(catalog, read(ex, CreateNamespaceRequest.class));
      }
    }
    Namespace ns = n > 1 ? RESTUtil.decodeNamespace(parts.get(1)) : Namespace.empty();
    if (n == 2) {
      switch (method) {
        case "GET":
          return CatalogHandlers.loadNamespace(catalog, ns);
        case "HEAD":
          CatalogHandlers.loadNamespace(catalog, ns);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(catalog, ns);
          return null;
        default:
          break;
      }
    }
    if (n == 3 && parts.get(2).equals("properties") && method.equals("POST")) {
      return CatalogHandlers.updateNamespaceProperties(
          catalog, ns, read(ex, UpdateNamespacePropertiesRequest.class));
    }
    if (n == 3 && parts.get(2).equals("tables")) {
      if (method.equals("GET")) {
        return page(CatalogHandlers.listTables(catalog, ns).identifiers(), query);
      }
      if (method.equals("POST")) {
        return CatalogHandlers.createTable(catalog, ns, read(ex, CreateTableRequest.class));
      }
    }
    if (n == 3 && parts.get(2).equals("views")) {
      if (method.equals("GET")) {
        return page(CatalogHandlers.listViews(catalog, ns).identifiers(), query);
      }
      if (method.equals("POST")) {
        CreateViewRequest request = read(ex, CreateViewRequest.class);
        return withInjectedFailure(() -> CatalogHandlers.createView(catalog, ns, request));
      }
    }
    if (n == 4 && parts.get(2).equals("tables")) {
      TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(parts.get(3)));
      switch (method) {
        case "GET":
          return CatalogHandlers.loadTable(catalog, ident);
        case "HEAD":
          if (!catalog.tableExists(ident)) {
            throw new NoSuchTableException("Table does not exist: %s", ident);
          }
          return null;
        case "POST":
          return CatalogHandlers.updateTable(catalog, ident, read(ex, UpdateTableRequest.class));
        case "DELETE":
          CatalogHandlers.dropTable(catalog, ident);
          return null;
        default:
          break;
      }
    }
    if (n == 4 && parts.get(2).equals("views")) {
      TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(parts.get(3)));
      switch (method) {
        case "GET":
          return CatalogHandlers.loadView(catalog, ident);
        case "HEAD":
          if (!catalog.viewExists(ident)) {
            throw new NoSuchViewException("View does not exist: %s", ident);
          }
          return null;
        case "POST":
          return commitView(ident, read(ex, UpdateTableRequest.class));
        case "DELETE":
          CatalogHandlers.dropView(catalog, ident);
          return null;
        default:
          break;
      }
    }
    throw new HttpError(404, "NotFoundException", "no route for " + method + " " + rawPath);
  }

  private Object commitView(TableIdentifier ident, UpdateTableRequest request) {
    return withInjectedFailure(() -> CatalogHandlers.updateView(catalog, ident, request));
  }

  // A pending injected failure hits the next view write (create or commit), before or after it.
  private Object withInjectedFailure(java.util.function.Supplier<Object> write) {
    boolean inject = failStatus != 0 && failCount.getAndUpdate(c -> c > 0 ? c - 1 : 0) > 0;
    int status = failStatus;
    if (inject && !failAfter) {
      throw new HttpError(status, status == 409 ? "CommitFailedException" : "CommitStateUnknownException",
          "injected failure before commit");
    }
    Object response = write.get();
    if (inject) {
      throw new HttpError(status, status == 409 ? "CommitFailedException" : "CommitStateUnknownException",
          "injected failure after commit");
    }
    return response;
  }

  private Object admin(String method, String action, Map<String, String> query) {
    if (action.equals("health")) {
      return "{\"status\":\"ok\"}";
    }
    if (action.equals("fail") && method.equals("POST")) {
      failAfter = "after".equals(query.getOrDefault("phase", "before"));
      failStatus = Integer.parseInt(query.getOrDefault("status", "409"));
      failCount.set(Integer.parseInt(query.getOrDefault("count", "1")));
    }
    if (action.equals("fail")) {
      return "{\"remaining\":" + failCount.get() + "}";
    }
    throw new HttpError(404, "NotFoundException", "unknown admin action " + action);
  }

  private Object config() {
    ConfigResponse.Builder builder = ConfigResponse.builder();
    if (!prefix.isEmpty()) {
      builder.withOverride("prefix", prefix);
    }
    ObjectNode node = MAPPER.valueToTree(builder.build());
    ArrayNode endpoints = node.putArray("endpoints");
    for (String endpoint : ENDPOINTS) {
      endpoints.add(endpoint);
    }
    return node;
  }

  private Object oauthToken(String form) {
    Map<String, String> data = RESTUtil.decodeFormData(form);
    String given = data.getOrDefault("client_id", "") + ":" + data.getOrDefault("client_secret", "");
    if (client.isEmpty() || !client.equals(given) || !"client_credentials".equals(data.get("grant_type"))) {
      throw new HttpError(401, "NotAuthorizedException", "invalid client credentials");
    }
    return OAuthTokenResponse.builder().withToken(token).withTokenType("bearer")
        .withIssuedTokenType("urn:ietf:params:oauth:token-type:access_token")
        .setExpirationInSeconds(3600).build();
  }

  private void authorize(HttpExchange ex) {
    if (token.isEmpty()) {
      return;
    }
    String header = ex.getRequestHeaders().getFirst("Authorization");
    if (header == null || !header.equals("Bearer " + token)) {
      throw new HttpError(401, "NotAuthorizedException", "Not authorized: missing or invalid bearer token");
    }
  }

  // Paging as in Iceberg 1.7+: sorted by name, the token is the last name of the page.
  private ObjectNode page(List<TableIdentifier> all, Map<String, String> query) {
    List<TableIdentifier> sorted = new ArrayList<>(all);
    sorted.sort(Comparator.comparing(TableIdentifier::name));
    int size = maxPageSize;
    if (query.containsKey("pageSize")) {
      size = Math.min(size, Integer.parseInt(query.get("pageSize")));
    }
    if (size <= 0) {
      throw new BadRequestException("Invalid page size: %s", size);
    }
    String after = query.get("pageToken");
    List<TableIdentifier> page = new ArrayList<>();
    boolean more = false;
    for (TableIdentifier ident : sorted) {
      if (after != null && !after.isEmpty() && ident.name().compareTo(after) <= 0) {
        continue;
      }
      if (page.size() == size) {
        more = true;
        break;
      }
      page.add(ident);
    }
    ObjectNode node = MAPPER.valueToTree(ListTablesResponse.builder().addAll(page).build());
    if (more) {
      node.put("next-page-token", page.get(page.size() - 1).name());
    } else {
      node.putNull("next-page-token");
    }
    return node;
  }

  private static <T> T read(HttpExchange ex, Class<T> type) throws IOException {
    return MAPPER.readValue(readBody(ex), type);
  }

  private static String readBody(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      // keep namespace values encoded: RESTUtil.decodeNamespace splits on %1F before decoding
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      out.put(key, key.equals("parent") ? value : URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return out;
  }
}
